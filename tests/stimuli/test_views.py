"""Staff pages of the stimuli app: access, import, generation in the background, pattern table."""
from __future__ import annotations

import json
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from spotlight_study.stimuli.models import GenerationJob, JobStatus, MiningJob, Output, StimulusSet

from .conftest import wait_for


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/stimuli/", "/stimuli/import/", "/stimuli/generate/"])
def test_pages_need_staff(client, url):
    """Anonymous users are sent to the login page; logged-in non-staff users get 403."""
    assert client.get(url).status_code == 302
    client.force_login(User.objects.create_user("someone", password="x"))
    assert client.get(url).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/stimuli/", "/stimuli/import/", "/stimuli/generate/"])
def test_pages_render_for_staff(staff_client, url, settings, api_key):
    """Staff see the list, import and generation pages; the API key is never on them."""
    settings.OPENAI_API_KEY = api_key
    response = staff_client.get(url)
    assert response.status_code == 200
    assert api_key not in response.content.decode()


@pytest.mark.django_db
def test_progress_json_needs_staff(client, mined_job):
    """The progress JSON is for staff only."""
    url = f"/stimuli/jobs/mining/{mined_job.pk}/progress.json"
    client.force_login(User.objects.create_user("someone", password="x"))
    assert client.get(url).status_code == 403


def test_progress_json(staff_client, mined_job):
    """The progress JSON gives status, stage, done and total of a job; unknown jobs are 404."""
    data = staff_client.get(f"/stimuli/jobs/mining/{mined_job.pk}/progress.json").json()
    assert data["kind"] == "mining" and data["status"] == "succeeded"
    assert data["done"] == data["total"] == mined_job.patterns.count()
    assert staff_client.get("/stimuli/jobs/mining/999999/progress.json").status_code == 404
    assert staff_client.get(f"/stimuli/jobs/nonsense/{mined_job.pk}/progress.json").status_code == 404


@pytest.mark.django_db
def test_import_view_stores_outputs(staff_client):
    """Uploading two files creates a set and redirects to its page."""
    response = staff_client.post(
        "/stimuli/import/",
        {
            "title": "two files",
            "file1": SimpleUploadedFile("a.txt", b"one\ntwo\n"),
            "file2": SimpleUploadedFile("b.json", b'["three"]'),
            "format": "auto", "column": "text", "group1_value": "1", "group2_value": "2",
        },
    )
    stimulus_set = StimulusSet.objects.get()
    assert response.status_code == 302 and response.url == f"/stimuli/sets/{stimulus_set.pk}/"
    assert stimulus_set.outputs.count() == 3


@pytest.mark.django_db
def test_import_view_shows_the_error_and_stores_nothing(staff_client, settings):
    """A bad upload (over the limit) brings the form back with the message; nothing is stored."""
    settings.STIMULI_MAX_UPLOAD_BYTES = 5
    response = staff_client.post(
        "/stimuli/import/",
        {
            "title": "too big",
            "file1": SimpleUploadedFile("a.txt", b"0123456789\n"),
            "file2": SimpleUploadedFile("b.txt", b"x\n"),
            "format": "auto", "column": "text", "group1_value": "1", "group2_value": "2",
        },
    )
    assert response.status_code == 200
    assert "a.txt is 0.0 MB; the limit is 0.0 MB" in response.content.decode()
    assert StimulusSet.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_generation_runs_in_the_background_in_the_embedded_default(staff_client, openai_settings, openai_server, api_key):
    """With the embedded default (thread runner), the request returns before the job ends; the job then completes."""
    openai_settings.STIMULI_JOB_RUNNER = "thread"
    openai_server.hold()  # no answer comes back until the request has returned
    response = staff_client.post(
        "/stimuli/generate/",
        {
            "title": "doctors", "prompt_group1": "About Dr. Smith.", "prompt_group2": "About Dr. Li.",
            "model": "m", "n_per_group": 5, "temperature": 1.0, "top_p": 1.0, "max_tokens": 50,
        },
    )
    job = GenerationJob.objects.get()
    assert response.status_code == 302
    # The page came back while the model could not answer: the job had not ended, and could not.
    assert job.status in (JobStatus.QUEUED, JobStatus.RUNNING) and job.done == 0
    assert not Output.objects.filter(stimulus_set=job.stimulus_set).exists()
    openai_server.release()
    wait_for(lambda: GenerationJob.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED, timeout_s=60, what="the job")
    page = staff_client.get(response.url).content.decode()
    assert '<span data-field="done">10</span> of <span data-field="total">10</span>' in page
    assert '<span data-field="status">succeeded</span>' in page
    assert api_key not in page


def test_pattern_table_sorts_and_highlights_escaped_examples(staff_client, mined_job):
    """The table sorts by a column and shows examples with the tokens in <mark>, all text escaped."""
    url = f"/stimuli/mining/{mined_job.pk}/"
    html = staff_client.get(url, {"sort": "count_group2", "dir": "desc"}).content.decode()
    codes = [unescape(line.split("<code>")[1].split("</code>")[0]) for line in html.splitlines() if "<td><code>" in line]
    by_text = {p.clauses_text: p for p in mined_job.patterns.all()}
    counts = [by_text[c].count_group2 for c in codes]
    assert len(counts) == mined_job.patterns.count() > 1
    assert counts == sorted(counts, reverse=True)
    assert "<mark>She</mark>" in html
    ascending = staff_client.get(url, {"sort": "count_group2", "dir": "asc"}).content.decode()
    codes_up = [unescape(line.split("<code>")[1].split("</code>")[0]) for line in ascending.splitlines() if "<td><code>" in line]
    assert [by_text[c].count_group2 for c in codes_up] == sorted(counts)


def test_pattern_table_escapes_outputs_shown_as_examples(staff_client, mined_job):
    """An output containing markup is shown escaped when it is an example of a pattern."""
    she = next(p for p in mined_job.patterns.all() if ["She"] in p.clauses)
    from spotlight_study.stimuli.selectors import pattern_rows

    rows = pattern_rows(mined_job, [she], per_group=30)
    shown = "".join(str(h) for h in rows[0].examples[2])
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in shown
    assert "<script>" not in shown
    assert shown.count("<mark>She</mark>") == 2 * 20 + 1


def test_mining_start_view_queues_a_job(staff_client, mined_job, django_capture_on_commit_callbacks, settings):
    """Posting the mining form creates a queued job and hands it to the runner after commit."""
    settings.STIMULI_JOB_RUNNER = "thread"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = staff_client.post(
            f"/stimuli/sets/{mined_job.stimulus_set_id}/mine/",
            {"method": "ctfidf", "pipeline": "", "fisher_p_value": 0.01, "clause_max_overlap": 0.05, "min_overlap": 0.3, "top_k": 5},
        )
    assert response.status_code == 302
    job = MiningJob.objects.exclude(pk=mined_job.pk).get()
    assert (job.method, job.status, job.params) == ("ctfidf", JobStatus.QUEUED, {"top_k": 5})
    assert len(callbacks) == 1  # the background start, only once committed


def test_set_page_lists_jobs(staff_client, mined_job):
    """The set page shows the counts per group and a link to the patterns."""
    html = staff_client.get(f"/stimuli/sets/{mined_job.stimulus_set_id}/").content.decode()
    assert "<strong>21</strong> outputs" in html
    assert f"/stimuli/mining/{mined_job.pk}/" in html
    json.loads(staff_client.get(f"/stimuli/jobs/mining/{mined_job.pk}/progress.json").content)
