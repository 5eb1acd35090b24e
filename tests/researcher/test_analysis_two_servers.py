"""Issue 39's "done when": a report started from the browser on one server opens from another.

Two uWSGI servers from the Procfile on 127.0.0.1, on the test database, each with its own
ANALYSIS_ROOT (as two machines have two disks) and one shared S3-compatible store (moto's server
mode, tests/researcher/s3_server.py). The researcher logs in on server A and presses "Run
analysis" (the page's POST, with its CSRF token); A runs the job in a thread (the embedded
default's runner). Server B then shows the run, its report and its zip, read from the store.
"""
from __future__ import annotations

import re
import time

import httpx
import pytest
from django.contrib.auth.models import Group, User

from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.stimuli.models import JobStatus

from ..security.conftest import _start_server, csrf_token, procfile_web_command
from .analysis_helpers import annotate_demo_study, zip_names
from .s3_server import s3_store  # noqa: F401  (fixture)

PASSWORD = "analysis-two-servers-pw-1"


def _server(monkeypatch, tmp_path, name: str, env: dict[str, str]):
    """The Procfile's uWSGI on a free port of 127.0.0.1 with ``env`` added (its own log)."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    (tmp_path / name).mkdir()
    return _start_server(command, tmp_path / name)


@pytest.mark.django_db(transaction=True)
def test_a_report_started_on_one_server_opens_from_another(demo_study, s3_store, tmp_path,  # noqa: F811
                                                           real_password_hashers,
                                                           monkeypatch):
    """Run analysis on A (browser POST); B lists the run and serves its report and zip from the
    shared store, while B's own ANALYSIS_ROOT stays empty."""
    annotate_demo_study(demo_study)
    user = User.objects.create_user("two-servers", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    store_env = s3_store.environment()
    servers = []
    try:
        for name in ("a", "b"):
            servers.append(_server(monkeypatch, tmp_path, name, {
                **store_env, "ANALYSIS_ROOT": str(tmp_path / f"disk-{name}"),
                "STIMULI_JOB_RUNNER": "thread"}))
        a, b = servers
        with httpx.Client(base_url=a.url, timeout=60, trust_env=False) as browser_a:
            form = browser_a.get("/accounts/login/")
            logged_in = browser_a.post("/accounts/login/", data={
                "username": "two-servers", "password": PASSWORD,
                "csrfmiddlewaretoken": csrf_token(form.text)})
            assert logged_in.status_code == 302, a.log()[-3000:]
            page = browser_a.get(f"/researcher/{demo_study.slug}/")
            assert "Run analysis" in page.text
            started = browser_a.post(f"/researcher/{demo_study.slug}/analysis/",
                                     data={"csrfmiddlewaretoken": csrf_token(page.text)})
            assert started.status_code == 302, a.log()[-3000:]
            run = AnalysisRun.objects.get(study=demo_study)
            assert run.started_by == "two-servers" and run.origin == "page"
            progress = f"/researcher/{demo_study.slug}/analysis/{run.pk}/progress.json"
            for _ in range(600):  # bounded: 600 polls of 0.5 s at most
                status = browser_a.get(progress).json()["status"]
                if status not in ("queued", "running"):
                    break
                time.sleep(0.5)
            run.refresh_from_db()
            assert run.status == JobStatus.SUCCEEDED, (run.error, a.log()[-3000:])
            print(f"analysis run {run.pk}: {len(run.files)} files, "
                  f"{sum(f['size'] for f in run.files):,} bytes stored, "
                  f"{(run.finished_at - run.started_at).total_seconds():.1f} s from start to finish")
            cookies = browser_a.cookies
        # Server B: the same session (sessions live in the database), another process and disk.
        with httpx.Client(base_url=b.url, timeout=60, trust_env=False, cookies=cookies) as browser_b:
            study_page = browser_b.get(f"/researcher/{demo_study.slug}/")
            assert study_page.status_code == 200
            assert re.search(rf"/analysis/{run.pk}/report/", study_page.text)
            report = browser_b.get(f"/researcher/{demo_study.slug}/report/")
            assert report.status_code == 200, b.log()[-3000:]
            assert run.input_sha256 in report.text and "<html" in report.text.lower()
            archive = browser_b.get(f"/researcher/{demo_study.slug}/analysis/{run.pk}.zip")
            assert archive.status_code == 200
            assert len(zip_names(archive.content)) == len(run.files)
    finally:
        logs = "".join(server.stop() or "" for server in servers)
    assert not (tmp_path / "disk-b").exists() or not any((tmp_path / "disk-b").rglob("*"))
    assert not (tmp_path / "disk-a").exists() or not any((tmp_path / "disk-a").rglob("*"))
    assert "Traceback" not in logs
