"""Reads of the researcher home: every study with its participant and label counts."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, F, Q
from django.utils import timezone

from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.stimuli.selectors import job_is_stale
from spotlight_study.accounts.roles import READING
from spotlight_study.studies.access import studies_visible_to
from spotlight_study.studies.models import Study

from .models import AnalysisRun


@dataclass(frozen=True)
class StudyHomeRow:
    """One study on the researcher home.

    ``in_progress`` and ``completed`` count real (non-pilot) participants, as the study page
    does: in progress means started within the study's abandonment timeout. ``answers`` are
    the saved answers (training and main) of real participants, each to be labeled, and
    ``labeled`` those with a final label.
    """

    study: Study
    in_progress: int
    completed: int
    answers: int
    labeled: int


def study_home_rows(*, user, now: datetime | None = None) -> list[StudyHomeRow]:
    """The studies ``user`` may read (``studies.access.studies_visible_to``), newest first, with
    their counts; three queries whatever the number of studies and participants (studies,
    participant counts, answer and label counts)."""
    now = now or timezone.now()
    studies = list(studies_visible_to(user, READING).order_by("-created_at"))
    if not studies:
        return []
    # Each study has its own timeout, so "still in progress" is one condition per study.
    recent = Q(pk__in=[])
    for s in studies:
        cutoff = now - timedelta(minutes=s.abandonment_timeout_minutes)
        recent |= Q(study_id=s.pk, started_at__gte=cutoff)
    people = {
        row["study_id"]: row
        for row in Participant.objects.filter(is_pilot=False)
        .values("study_id")
        .annotate(
            completed=Count("id", filter=Q(status=Participant.Status.COMPLETED)),
            in_progress=Count("id", filter=Q(status=Participant.Status.IN_PROGRESS) & recent),
        )
        .order_by()
    }
    # From the answers, not the annotation items: an answer nobody has opened may have no item yet.
    items = {
        row["study_id"]: row
        for row in TaskResponse.objects.filter(participant__is_pilot=False)
        .values(study_id=F("participant__study_id"))
        .annotate(answers=Count("id"), labeled=Count("annotation_item__final_label"))
        .order_by()
    }
    empty = {"completed": 0, "in_progress": 0, "answers": 0, "labeled": 0}
    return [
        StudyHomeRow(
            study=s,
            in_progress=people.get(s.pk, empty)["in_progress"],
            completed=people.get(s.pk, empty)["completed"],
            answers=items.get(s.pk, empty)["answers"],
            labeled=items.get(s.pk, empty)["labeled"],
        )
        for s in studies
    ]


# --------------------------------------------------------------------------
# analysis runs (researcher/models.py)
# --------------------------------------------------------------------------
#: Analysis runs listed on the study page, newest first.
ANALYSIS_RUNS_SHOWN = 10


def analysis_runs_recent(*, study: Study, limit: int = ANALYSIS_RUNS_SHOWN) -> list:
    """The study's newest ``limit`` analysis runs (:class:`~.models.AnalysisRun`), newest first,
    their starter joined (one query)."""
    return list(AnalysisRun.objects.filter(study=study).select_related("created_by")
                .order_by("-created_at", "-pk")[:limit])


def analysis_run_latest(*, study: Study):
    """The study's newest succeeded analysis run (its report is "the latest report"), or ``None``."""
    return (AnalysisRun.objects.filter(study=study, status="succeeded").select_related("created_by")
            .order_by("-finished_at", "-pk").first())


def analysis_run_get(*, study: Study, run_id: int):
    """Analysis run ``run_id`` of ``study``; ``AnalysisRun.DoesNotExist`` if it is another
    study's or does not exist."""
    return AnalysisRun.objects.select_related("created_by", "study").get(pk=run_id, study=study)


def analysis_run_progress(run) -> dict:
    """A run's progress as plain data (the page's JSON poll returns exactly this).

    Keys: ``id``, ``status``, ``stage``, ``done``, ``total`` (stages), ``error``, ``stale``
    (not reporting for ``STIMULI_JOB_STALE_SECONDS``), ``started_by``, ``created_at``,
    ``started_at``, ``finished_at`` (ISO 8601 or ``None``), ``input_sha256``, ``plan_sha256``.
    """
    def iso(value):
        return value.isoformat() if value else None

    return {"id": run.pk, "status": run.status, "stage": run.stage, "done": run.done,
            "total": run.total, "error": run.error, "stale": job_is_stale(run),
            "started_by": run.started_by, "created_at": iso(run.created_at),
            "started_at": iso(run.started_at), "finished_at": iso(run.finished_at),
            "input_sha256": run.input_sha256, "plan_sha256": run.plan_sha256}
