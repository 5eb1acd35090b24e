"""Helpers of the analysis-run tests: a demo study with annotated answers, a run done in this
process, and reading a stored report back through the views."""
from __future__ import annotations

import io
import uuid
import zipfile

from django.test import Client

from spotlight_study.participation.models import TaskResponse
from spotlight_study.researcher.analysis_execution import analysis_job_run
from spotlight_study.researcher.analysis_jobs import analysis_job_create
from spotlight_study.researcher.models import AnalysisRun

from ..annotation.conftest import make_user
from ..conftest import Walker
from .test_analyze import _annotate_all

#: Participants walked through the demo study before a run.
PARTICIPANTS = 8


def annotate_demo_study(study, *, participants: int = PARTICIPANTS) -> None:
    """``participants`` complete the demo study and two annotators agree on every answer:
    training and pattern answers identified, every second no-pattern answer per setting too
    (so both identification tests are defined)."""
    for _ in range(participants):
        Walker(Client(), study.slug).complete()
    annotators = [make_user(f"annotator-{uuid.uuid4().hex[:6]}", "annotators") for _ in range(2)]
    main = TaskResponse.objects.filter(position__gt=0, participant__study=study).order_by("pk")
    chosen = set()
    for key in ("doctor", "farming"):
        ids = [r.pk for r in main if r.condition == "no_pattern" and r.setting.key == key]
        chosen.update(ids[::2])
    _annotate_all(study, annotators,
                  lambda r: r.position == 0 or r.condition == "pattern" or r.pk in chosen)


def run_here(study, **create) -> tuple[AnalysisRun, dict | None]:
    """Create a run of ``study`` (``create``: :func:`analysis_job_create`'s arguments) without
    dispatching it, run it in this process, and return the refreshed row and the results."""
    run = analysis_job_create(study=study, dispatch=False, **create)
    results = analysis_job_run(job_id=run.pk, run_id=uuid.uuid4().hex)
    run.refresh_from_db()
    return run, results


def body(response) -> bytes:
    """The whole body of a response, streamed (``FileResponse``) or not."""
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def zip_names(data: bytes) -> list[str]:
    """The names in a zip file's bytes."""
    return sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())
