"""Analysis runs (issue 39 §2): started from the study page, recorded, stored through Django's
storage API, shown and downloaded through views with the role check, and the command line's
runs recorded the same way."""
from __future__ import annotations

import json

import pytest
from django.core.files.storage import storages
from django.core.management import call_command

from spotlight_study.researcher.analysis_storage import run_prefix
from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.stimuli.models import JobStatus

from ..annotation.conftest import make_user
from .analysis_helpers import annotate_demo_study, body, run_here, zip_names

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher_client(client):
    """A client logged in as a member of the researchers group (not staff)."""
    client.force_login(make_user("researcher-1", "researchers"))
    return client


def test_run_analysis_button_queues_a_run_and_a_second_is_refused(
        researcher_client, demo_study, settings, django_capture_on_commit_callbacks):
    """The page's POST records a queued run by the researcher and dispatches it after commit; a
    second POST while it is queued is refused with a message and creates nothing."""
    settings.STIMULI_JOB_RUNNER = "manual"  # the run is left queued: the refusal is the point
    url = f"/researcher/{demo_study.slug}/analysis/"
    response = researcher_client.post(url, {"include_pilot": "1"}, follow=True)
    run = AnalysisRun.objects.get(study=demo_study)
    assert (run.status, run.origin, run.started_by, run.include_pilot, run.total) == (
        JobStatus.QUEUED, "page", "researcher-1", True, 3)
    assert f"Analysis run {run.pk} started" in response.content.decode()
    response = researcher_client.post(url, follow=True)
    text = response.content.decode()
    assert f"Analysis run {run.pk} of this study is still queued" in text
    assert AnalysisRun.objects.filter(study=demo_study).count() == 1
    # The page shows the run with its progress, polled while it is active.
    assert f'data-analysis-progress="/researcher/{demo_study.slug}/analysis/{run.pk}/progress.json"' in text
    progress = researcher_client.get(f"/researcher/{demo_study.slug}/analysis/{run.pk}/progress.json").json()
    assert (progress["status"], progress["done"], progress["total"], progress["started_by"]) == (
        "queued", 0, 3, "researcher-1")


def test_a_bad_include_pilot_value_starts_nothing(researcher_client, demo_study):
    """include_pilot other than 0 or 1: a message, no run."""
    response = researcher_client.post(f"/researcher/{demo_study.slug}/analysis/",
                                      {"include_pilot": "yes"}, follow=True)
    assert "include_pilot must be 1" in response.content.decode()
    assert not AnalysisRun.objects.exists()


def test_a_run_stores_every_output_and_the_views_serve_them(researcher_client, demo_study):
    """A successful run records its input SHA, software and files; the report, a figure, a table
    and the zip come from the storage, with the report's own CSP; unknown names are 404."""
    annotate_demo_study(demo_study)
    user = make_user("starter", "researchers")
    run, results = run_here(demo_study, created_by=user)
    assert run.status == JobStatus.SUCCEEDED, run.error
    assert (run.done, run.stage, run.started_by) == (3, "", "starter")
    assert run.input_sha256 == results["input_sha256"] and len(run.input_sha256) == 64
    assert run.software["django"] and run.software["scipy"] == results["software"]["scipy"]
    assert run.storage_prefix == run_prefix(slug=demo_study.slug, run_id=run.pk)
    names = [f["name"] for f in run.files]
    for expected in ("report.html", "report.md", "results.json", "figures/identification_rate.png",
                     "figures/identification_rate.svg", "tables/identification.csv"):
        assert expected in names, names
    assert not any(n.startswith("data/") for n in names)  # the export itself is not kept
    storage = storages["analysis"]
    stored = json.loads(storage.open(run.storage_prefix + "results.json").read())
    assert stored["input_sha256"] == run.input_sha256

    base = f"/researcher/{demo_study.slug}/analysis/{run.pk}"
    report = researcher_client.get(f"{base}/report/")
    assert report.status_code == 200 and report["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in report["Content-Security-Policy"]
    assert run.input_sha256 in body(report).decode()
    assert body(researcher_client.get(f"/researcher/{demo_study.slug}/report/")) == body(
        researcher_client.get(f"{base}/report/"))
    figure = researcher_client.get(f"{base}/files/figures/identification_rate.png")
    assert figure.status_code == 200 and body(figure)[:8] == b"\x89PNG\r\n\x1a\n"
    table = researcher_client.get(f"{base}/files/tables/identification.csv")
    assert table.status_code == 200 and b"setting" in body(table)
    for bad in ("files/../../settings.py", "files/data/responses.csv", "files/nothing.txt"):
        assert researcher_client.get(f"{base}/{bad}").status_code == 404, bad
    archive = researcher_client.get(f"{base}.zip")
    assert archive["Content-Disposition"] == f'attachment; filename="{demo_study.slug}-analysis-{run.pk}.zip"'
    assert zip_names(archive.content) == sorted(f"{demo_study.slug}-analysis-{run.pk}/{n}" for n in names)
    page = researcher_client.get(f"{base}/").content.decode()
    assert run.input_sha256 in page and "starter (researcher page)" in page
    assert f"{base}/files/figures/identification_rate.png" in page
    study_page = researcher_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert "Latest analysis report" in study_page and f"{base}.zip" in study_page


def test_the_views_refuse_non_researchers(client, demo_study):
    """An annotator gets 403 and an anonymous visitor the login page, for every analysis view."""
    run = AnalysisRun.objects.create(study=demo_study, status=JobStatus.SUCCEEDED, total=3, done=3,
                                     files=[{"name": "report.html", "size": 1}],
                                     storage_prefix=run_prefix(slug=demo_study.slug, run_id=1))
    base = f"/researcher/{demo_study.slug}/analysis/{run.pk}"
    urls = [f"{base}/", f"{base}/report/", f"{base}/files/report.html", f"{base}.zip",
            f"{base}/progress.json", f"/researcher/{demo_study.slug}/report/"]
    for url in urls:
        assert client.get(url).status_code == 302, url
    assert client.post(f"/researcher/{demo_study.slug}/analysis/").status_code == 302
    client.force_login(make_user("annotator-x", "annotators"))
    for url in urls:
        assert client.get(url).status_code == 403, url
    assert client.post(f"/researcher/{demo_study.slug}/analysis/").status_code == 403
    assert AnalysisRun.objects.count() == 1


def test_a_run_of_another_study_is_not_found(researcher_client, demo_study, demo_data):
    """A run id of another study gives 404 under this study's URLs."""
    from spotlight_study.studies.services import study_import

    other = study_import(data={**demo_data, "slug": "other-study"})
    run = AnalysisRun.objects.create(study=other, status=JobStatus.SUCCEEDED, total=3)
    assert researcher_client.get(f"/researcher/{demo_study.slug}/analysis/{run.pk}/").status_code == 404


def test_a_run_that_cannot_analyse_records_why(researcher_client, demo_study):
    """Answers without labels: the run fails with the analysis' message, stores nothing, and the
    page shows the message; the report stays "not yet"."""
    from ..conftest import Walker
    from django.test import Client

    Walker(Client(), demo_study.slug).complete()
    run, results = run_here(demo_study)
    assert results is None and run.status == JobStatus.FAILED and run.files == []
    assert run.error.startswith("The data cannot be analysed yet:") and "annotated first" in run.error
    page = researcher_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert "annotated first" in page and "No analysis report yet" in page
    assert researcher_client.get(f"/researcher/{demo_study.slug}/report/").status_code == 404


def test_a_stale_run_does_not_block_a_new_one(demo_study, settings):
    """A running run that stopped reporting is marked failed when a new run is asked for."""
    from datetime import timedelta

    from django.utils import timezone

    from spotlight_study.researcher.analysis_jobs import analysis_job_create

    settings.STIMULI_JOB_RUNNER = "manual"
    old = AnalysisRun.objects.create(study=demo_study, status=JobStatus.RUNNING, total=3,
                                     run_id="gone", heartbeat_at=timezone.now() - timedelta(hours=1))
    AnalysisRun.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    new = analysis_job_create(study=demo_study)
    old.refresh_from_db()
    assert old.status == JobStatus.FAILED and "stopped reporting" in old.error
    assert new.status == JobStatus.QUEUED


def test_the_command_line_records_its_run_the_same_way(demo_study, tmp_path, capsys):
    """manage.py analyze records a run started by "command line", stores its outputs, and still
    writes --out; without --out only the storage is written."""
    annotate_demo_study(demo_study)
    call_command("analyze", demo_study.slug, "--out", str(tmp_path / "out"))
    call_command("analyze", demo_study.slug)
    first, second = AnalysisRun.objects.filter(study=demo_study).order_by("pk")
    for run in (first, second):
        assert (run.status, run.origin, run.started_by, run.created_by) == (
            JobStatus.SUCCEEDED, "command_line", "command line", None)
        assert storages["analysis"].exists(run.storage_prefix + "report.html")
    assert first.input_sha256 == second.input_sha256  # the same data
    assert (tmp_path / "out" / "data" / "responses.csv").exists()
    out = capsys.readouterr().out
    assert f"analysis run {second.pk} in the analysis storage" in out


def test_a_margin_out_of_range_records_nothing(demo_study):
    """analyze --margin 2: status 2, a clear message, no run recorded."""
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="margin must be between 0 and 1") as err:
        call_command("analyze", demo_study.slug, "--margin", "2")
    assert err.value.returncode == 2
    assert not AnalysisRun.objects.exists()


def test_a_second_backend_in_memory_storage(researcher_client, demo_study, settings):
    """The outputs go through the storage API only: with Django's InMemoryStorage as the
    ``analysis`` storage (nothing on disk), the report and the zip come from it."""
    settings.STORAGES = {**settings.STORAGES, "analysis": {
        "BACKEND": "django.core.files.storage.InMemoryStorage"}}
    annotate_demo_study(demo_study)
    run, _ = run_here(demo_study)
    assert run.status == JobStatus.SUCCEEDED, run.error
    assert type(storages["analysis"]).__name__ == "InMemoryStorage"
    assert storages["analysis"].exists(run.storage_prefix + "report.html")
    report = researcher_client.get(f"/researcher/{demo_study.slug}/report/")
    assert report.status_code == 200 and run.input_sha256 in body(report).decode()
