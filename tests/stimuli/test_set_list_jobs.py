"""The stimulus list shows each queued or running job with its state and progress."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from spotlight_study.stimuli.importers import ImportedGroups
from spotlight_study.stimuli.models import GenerationJob, JobStatus, StimulusSet
from spotlight_study.stimuli.selectors import active_jobs
from spotlight_study.stimuli.services import mining_job_create, stimulus_set_import

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _jobs_stay_queued(settings):
    """Created jobs are not run (no thread, no broker): they stay queued for the page."""
    settings.STIMULI_JOB_RUNNER = "manual"


def _imported_set(title: str) -> StimulusSet:
    groups = ImportedGroups([f"He reads {i}." for i in range(5)], [f"She reads {i}." for i in range(5)])
    return stimulus_set_import(title=title, groups=groups)


def _running_generation(title: str, *, done: int, total: int) -> GenerationJob:
    """A generation job running on a new (empty) generated set, ``done`` of ``total`` outputs."""
    stimulus_set = StimulusSet.objects.create(title=title, source=StimulusSet.Source.GENERATED)
    return GenerationJob.objects.create(
        stimulus_set=stimulus_set, base_url="http://127.0.0.1:9/v1", model="tiny-model",
        prompt_group1="a", prompt_group2="b", n_per_group=total // 2,
        status=JobStatus.RUNNING, stage="generating", done=done, total=total,
    )


def _jobs_table(html: str) -> str:
    match = re.search(r'<table id="active-jobs">(.*?)</table>', html, re.S)
    assert match, html
    return match.group(1)


def test_running_and_queued_jobs_are_listed_with_state_and_progress(staff_client):
    """A running generation job and a queued mining job appear with status, stage, done/total
    and live-progress URL; a finished job does not."""
    generation = _running_generation("generated doctors", done=3, total=8)
    mined_set = _imported_set("pronouns")
    mining = mining_job_create(stimulus_set=mined_set, method="ctfidf")
    finished = mining_job_create(stimulus_set=_imported_set("old set"), method="ctfidf")
    finished.status = JobStatus.SUCCEEDED
    finished.save(update_fields=["status"])

    html = staff_client.get("/stimuli/").content.decode()
    table = _jobs_table(html)
    rows = table.split("<tr>")[2:]
    assert len(rows) == 2  # oldest first: the generation job, then the mining job
    assert f"Generation #{generation.pk} (tiny-model)" in rows[0] and "generated doctors" in rows[0]
    assert '<span data-field="done">3</span> of <span data-field="total">8</span>' in rows[0]
    assert '<span data-field="status">running</span>' in rows[0] and "generating" in rows[0]
    assert f'data-progress-url="/stimuli/jobs/generation/{generation.pk}/progress.json"' in rows[0]
    assert f'href="/stimuli/mining/{mining.pk}/">Mining #{mining.pk}</a>' in rows[1]
    assert f'href="/stimuli/sets/{mined_set.pk}/">pronouns</a>' in rows[1]
    assert '<span data-field="status">queued</span>' in rows[1]
    assert f"#{finished.pk}<" not in table and "old set" not in table


def test_no_running_jobs_no_jobs_section(staff_client):
    """Without a queued or running job the list shows no jobs section."""
    _imported_set("idle")
    html = staff_client.get("/stimuli/").content.decode()
    assert "Running jobs" not in html and 'id="active-jobs"' not in html


def test_active_jobs_selector_reads_in_constant_queries():
    """Three queries (one per job kind: generation, mining, import) whatever the number of jobs; entries carry job_progress."""
    for i in range(2):
        _running_generation(f"gen {i}", done=i, total=4)
    with CaptureQueriesContext(connection) as few:
        entries = active_jobs()
    for i in range(2, 6):
        _running_generation(f"gen {i}", done=i, total=8)
        mining_job_create(stimulus_set=_imported_set(f"set {i}"), method="ctfidf")
    with CaptureQueriesContext(connection) as many:
        more = active_jobs()
        [entry["job"].stimulus_set.title for entry in more]
    assert len(entries) == 2 and len(more) == 10
    assert len(many.captured_queries) == len(few.captured_queries) == 3
    assert more[0]["progress"] == {**more[0]["progress"], "kind": "generation", "status": "running", "total": 4}
