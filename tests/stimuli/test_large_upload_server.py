"""Large uploads through the real server (issue 38, §2): the Procfile's uWSGI (one worker,
harakiri 30 s as in ``uwsgi.ini``) with a real Celery worker on the Redis broker.

The 800,000-line stimulus CSV of the fault trial (10 MB) is refused before it is parsed, with
the limit named, and nothing stored; a 10 MB file within the limits is accepted at once and read
by the Celery worker, with its progress readable over HTTP. No uWSGI worker is killed (no
``HARAKIRI`` and no respawn in the server's log).
"""
from __future__ import annotations

import os
import re

import httpx
import pytest

from spotlight_study.stimuli.models import ImportJob, JobStatus, Output, StimulusSet

from tests.conftest import make_staff
from tests.parallel import redis_test_url
from tests.processes import start_celery_worker, stop_process
from tests.security.conftest import _start_server, procfile_web_command

from .conftest import subprocess_env, wait_for

pytestmark = pytest.mark.timeout(900)

REDIS_URL = redis_test_url()
PASSWORD = "pw-for-tests-only"


def _trial_csv() -> bytes:
    """The trial's file: a header and 800,000 rows, 9.6 MB."""
    return b"text,group\n" + b"".join(b"out%06d,%d\n" % (i, 1 + i % 2) for i in range(800_000))


def _large_csv() -> bytes:
    """A 10 MB file within the limits: 100,000 rows of about 100 bytes."""
    filler = b"x" * 84
    return b"text,group\n" + b"".join(b"output %06d %s,%d\n" % (i, filler, 1 + i % 2) for i in range(100_000))


@pytest.fixture
def redis_db():
    """The Redis database of ``REDIS_URL``, empty before and after; skips (fails in CI) without Redis."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("CI") == "true":
            pytest.fail("Redis is not running (needed for the Celery worker)")
        pytest.skip("Redis is not running (needed for the Celery worker)")
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def server_and_worker(transactional_db, tmp_path, monkeypatch, redis_db, real_password_hashers):
    """The Procfile's uWSGI and a Celery worker, both on the test database and ``REDIS_URL``."""
    monkeypatch.setenv("CELERY_BROKER_URL", REDIS_URL)
    monkeypatch.setenv("STIMULI_JOB_RUNNER", "celery")
    worker = start_celery_worker("import-test", env=subprocess_env(
        CELERY_BROKER_URL=REDIS_URL, STIMULI_JOB_RUNNER="celery", LOG_LEVEL="INFO"),
        log_path=tmp_path / "worker.log")
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    server = _start_server(command, tmp_path)
    yield server, tmp_path / "worker.log"
    server.stop()
    stop_process(worker, timeout_s=20)


def _logged_in(base_url: str) -> httpx.Client:
    client = httpx.Client(base_url=base_url, timeout=120)
    page = client.get("/accounts/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post("/accounts/login/", data={
        "csrfmiddlewaretoken": token, "username": "uploader", "password": PASSWORD})
    assert response.status_code == 302, response.text[:2000]
    return client


def _upload(client: httpx.Client, data: bytes, title: str) -> httpx.Response:
    page = client.get("/stimuli/import/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    return client.post("/stimuli/import/", data={
        "csrfmiddlewaretoken": token, "title": title, "format": "auto", "column": "text",
        "group_column": "group", "group1_value": "1", "group2_value": "2",
    }, files={"file1": ("trial.csv", data, "text/csv")})


def test_the_trials_upload_is_refused_and_a_large_one_is_read_by_the_worker(server_and_worker):
    """Through uWSGI: the 800,000-line CSV gets the form back naming the line limit, nothing is
    stored; a 10 MB CSV of 100,000 rows redirects at once to its set, whose import job the
    Celery worker completes (progress over HTTP: done = total); no uWSGI worker was killed."""
    server, worker_log = server_and_worker
    make_staff("uploader", is_superuser=True)
    client = _logged_in(server.url)

    refused = _upload(client, _trial_csv(), "the trial's file")
    assert refused.status_code == 200, refused.text[:2000]
    assert "trial.csv has 800,001 lines or records; the limit is 200,000 per file" in refused.text
    assert "STIMULI_MAX_UPLOAD_LINES" in refused.text
    assert (StimulusSet.objects.count(), ImportJob.objects.count(), Output.objects.count()) == (0, 0, 0)

    data = _large_csv()
    assert len(data) > 10_000_000
    accepted = _upload(client, data, "ten megabytes")
    assert accepted.status_code == 302, accepted.text[:2000]
    job = ImportJob.objects.get()
    assert accepted.headers["location"] == f"/stimuli/sets/{job.stimulus_set_id}/"

    def finished():
        job.refresh_from_db()
        return job.status not in (JobStatus.QUEUED, JobStatus.RUNNING)

    wait_for(finished, timeout_s=600, interval_s=0.5, what="the import job")
    assert (job.status, job.error) == (JobStatus.SUCCEEDED, "")
    assert [Output.objects.filter(stimulus_set_id=job.stimulus_set_id, group=g).count() for g in (1, 2)] == [50_000, 50_000]
    progress = client.get(f"/stimuli/jobs/import/{job.pk}/progress.json").json()
    assert (progress["status"], progress["done"], progress["total"]) == ("succeeded", 100_000, 100_000)
    page = client.get(f"/stimuli/sets/{job.stimulus_set_id}/").text
    assert "<strong>50000</strong>" in page.replace(",", "")
    client.close()

    log = server.stop()
    assert "HARAKIRI" not in log and "Respawned uWSGI worker" not in log, log[-3000:]
    assert "stimuli.import_job_run" in worker_log.read_text()
