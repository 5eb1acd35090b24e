"""Uploads of output files: caps checked before parsing, large files read by a background job
(issue 38, §2). In process, on the test database; the real uWSGI server and Celery worker are
in ``test_large_upload_server.py``."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from spotlight_study.stimuli.errors import OutputImportError, StimuliError
from spotlight_study.stimuli.importers import ImportOptions, line_count, read_outputs
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.models import ImportJob, JobStatus, Output, StimulusSet
from spotlight_study.stimuli.services import mining_job_create
from spotlight_study.stimuli.tasks import IMPORT


def _csv(n_rows: int) -> bytes:
    """A CSV with a header and ``n_rows`` rows alternating between group 1 and 2."""
    return b"text,group\n" + b"".join(b"output number %d,%d\n" % (i, 1 + i % 2) for i in range(n_rows))


def _post(client, data: bytes, name: str = "big.csv", title: str = "big"):
    return client.post("/stimuli/import/", {
        "title": title, "file1": SimpleUploadedFile(name, data), "format": "auto", "column": "text",
        "group_column": "group", "group1_value": "1", "group2_value": "2",
    })


def test_lines_are_counted_with_or_without_a_last_newline():
    """line_count counts a last line without a newline, and nothing for an empty file."""
    assert (line_count(b""), line_count(b"a"), line_count(b"a\n"), line_count(b"a\nb")) == (0, 1, 1, 2)


@pytest.mark.django_db
def test_a_file_over_the_line_limit_is_refused_before_parsing_and_nothing_is_stored(staff_client, settings):
    """A CSV over STIMULI_MAX_UPLOAD_LINES brings the form back naming the limit and its setting;
    no set and no job are stored (the file is not even UTF-8: it is never decoded)."""
    settings.STIMULI_MAX_UPLOAD_LINES = 100
    response = _post(staff_client, _csv(150) + b"\xff\xfe not utf-8\n")
    text = response.content.decode()
    assert response.status_code == 200
    assert "big.csv has 152 lines or records; the limit is 100 per file" in text
    assert "STIMULI_MAX_UPLOAD_LINES" in text and "not UTF-8" not in text
    assert (StimulusSet.objects.count(), ImportJob.objects.count(), Output.objects.count()) == (0, 0, 0)


def test_a_one_line_json_file_with_more_texts_than_the_limit_is_refused():
    """The outputs read from a file count against the same limit: a one-line JSON list of 101
    texts is refused with a limit of 100."""
    data = json.dumps({"a": {"prompt": "p1", "outputs": ["x"] * 101}, "b": {"prompt": "p2", "outputs": ["y"]}})
    with pytest.raises(OutputImportError, match="has 102 lines or records; the limit is 100"):
        read_outputs(file1=("both.json", data.encode()), file2=None, options=ImportOptions(max_lines=100))


@pytest.mark.django_db
def test_a_small_file_is_still_imported_within_the_request(staff_client, settings):
    """A file of at most STIMULI_INLINE_IMPORT_BYTES is read at once: no import job."""
    response = _post(staff_client, _csv(10))
    stimulus_set = StimulusSet.objects.get()
    assert response.status_code == 302 and stimulus_set.outputs.count() == 10
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_a_large_file_is_read_by_a_background_job_with_progress(staff_client, settings,
                                                                django_capture_on_commit_callbacks):
    """A file over STIMULI_INLINE_IMPORT_BYTES: the request stores an empty set and a queued
    job, parses nothing; the job's run stores every output with its progress, empties the
    kept bytes, and a second run adds no duplicate. Mining waits for the import."""
    settings.STIMULI_INLINE_IMPORT_BYTES = 1000
    settings.STIMULI_JOB_RUNNER = "manual"
    data = _csv(12_001)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(staff_client, data)
    stimulus_set = StimulusSet.objects.get()
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response.url == f"/stimuli/sets/{stimulus_set.pk}/"
    assert (job.status, job.stage, stimulus_set.outputs.count()) == (JobStatus.QUEUED, "read", 0)
    assert bytes(job.file1_data) == data
    with pytest.raises(StimuliError, match="still being imported"):
        mining_job_create(stimulus_set=stimulus_set, method="ctfidf")
    page = staff_client.get(f"/stimuli/sets/{stimulus_set.pk}/").content.decode()
    assert "The uploaded files are read in the background" in page

    job_run_now(IMPORT, job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == (JobStatus.SUCCEEDED, 12_001, 12_001, "")
    assert bytes(job.file1_data) == b""
    assert [stimulus_set.outputs.filter(group=g).count() for g in (1, 2)] == [6001, 6000]
    assert stimulus_set.outputs.get(group=2, index=0).text == "output number 1"
    progress = staff_client.get(f"/stimuli/jobs/import/{job.pk}/progress.json").json()
    assert (progress["status"], progress["done"], progress["total"]) == ("succeeded", 12_001, 12_001)

    # Idempotent: a run of the same job again (a redelivered task) stores nothing twice.
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.QUEUED, run_id="", file1_data=data)
    job_run_now(IMPORT, job_id=job.pk)
    assert Output.objects.filter(stimulus_set=stimulus_set).count() == 12_001
    assert mining_job_create(stimulus_set=stimulus_set, method="ctfidf").total == 12_001


@pytest.mark.django_db
def test_a_bad_large_file_fails_its_job_with_the_message_and_stores_nothing(staff_client, settings):
    """A large file with a bad row: the job fails naming the line, no output is stored and the
    kept bytes are emptied; the set's page shows the message."""
    settings.STIMULI_INLINE_IMPORT_BYTES = 1000
    settings.STIMULI_JOB_RUNNER = "manual"
    _post(staff_client, _csv(2000) + b"late row,3\n")
    job = ImportJob.objects.get()
    job_run_now(IMPORT, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "record 2001: group '3' is neither '1' nor '2'" in job.error and "Nothing was imported" in job.error
    assert Output.objects.count() == 0 and bytes(job.file1_data) == b""
    page = staff_client.get(f"/stimuli/sets/{job.stimulus_set_id}/").content.decode()
    assert "group &#x27;3&#x27; is neither" in page
