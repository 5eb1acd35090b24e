"""A cache outage never stops recruitment: with Redis gone, or the file cache of serve.sh on a
full disk, the arrival limit and the API throttles let requests through (one warning per
interval), and the login lockout still holds.

The Redis cache is a redis-server of the test's own (``own_redis``), stopped mid-test; the shared
Redis is never touched. The full disk is a real one: a 64 KiB tmpfs filled to ``ENOSPC``
(``tests/tinyfs.py``).
"""
from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_ratelimit import core as ratelimit_core
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from spotlight_study import cache_backend
from spotlight_study.cache_backend import outage_warning_reset
from spotlight_study.participation.models import Participant

from ..conftest import new_id
from ..processes import run_python
from ..tinyfs import fill, free, tiny_tmpfs
from .conftest import _start_server, csrf_token, procfile_web_command

OUTAGE_TEXT = "The cache (Redis) cannot be reached"
FILE_OUTAGE_TEXT = "The cache (files) cannot be written or read (OSError ENOSPC"


def _ids() -> dict[str, str]:
    return {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(), "SESSION_ID": new_id()}


@pytest.fixture
def redis_cache(own_redis, settings, monkeypatch):
    """Django's default cache on the test's own Redis, as settings.py builds it for CACHE_URL."""
    import environ

    config = environ.Env.cache_url_config(own_redis.url)
    # The same rewrite as settings.py: the project's fail-soft subclass and short timeouts.
    config["BACKEND"] = "spotlight_study.cache_backend.FailSoftRedisCache"
    config["OPTIONS"] = {"socket_connect_timeout": 1.0, "socket_timeout": 1.0}
    settings.CACHES = {"default": config}
    window_end = int(time.time()) + 30  # the fixed window must not turn mid-test (test_arrival)
    monkeypatch.setattr(ratelimit_core, "_get_window", lambda value, period: window_end)
    outage_warning_reset()
    yield own_redis
    outage_warning_reset()


def test_settings_turn_a_redis_cache_url_into_the_fail_soft_backend():
    """CACHE_URL=redis://… gives FailSoftRedisCache with 1 s timeouts (settings.py)."""
    import os

    env = {**os.environ, "CACHE_URL": "redis://127.0.0.1:1/0", "DJANGO_SETTINGS_MODULE": "spotlight_study.settings"}
    out = run_python("-c", "import django; django.setup(); from django.conf import settings as s; "
                     "c = s.CACHES['default']; print(c['BACKEND'], c['OPTIONS']['socket_timeout'])",
                     env=env, timeout=60)
    assert out.stdout.split() == ["spotlight_study.cache_backend.FailSoftRedisCache", "1.0"], out.stderr


def test_arrivals_are_let_through_while_redis_is_down_with_one_warning(demo_study, redis_cache, settings, caplog):
    """Redis up: the 3rd arrival over 2/m is refused. Redis down: 5 more arrivals get in, one warning."""
    settings.ENTRY_RATE_LIMIT = "2/m"
    arrive = lambda: Client(REMOTE_ADDR="203.0.113.50").get(f"/s/{demo_study.slug}/", _ids())  # noqa: E731
    assert [arrive().status_code for _ in range(3)] == [302, 302, 429]

    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="spotlight_study.cache_backend"):
        codes = [arrive().status_code for _ in range(5)]
    assert codes == [302] * 5
    assert Participant.objects.count() == 7
    warnings = [r for r in caplog.records if OUTAGE_TEXT in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]

    redis_cache.start()  # back (empty): counting starts again
    assert [arrive().status_code for _ in range(3)] == [302, 302, 429]


def test_the_api_throttles_fail_open_and_bad_tokens_get_401(db, redis_cache, caplog):
    """Redis down: a good token is served (200) and a bad one refused (401), never 500."""
    staff = User.objects.create_user("ann", is_staff=True, is_superuser=True)
    good = Token.objects.create(user=staff).key
    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="spotlight_study.cache_backend"):
        client = APIClient(REMOTE_ADDR="198.51.100.9")
        client.credentials(HTTP_AUTHORIZATION=f"Token {good}")
        assert [client.get("/api/studies/").status_code for _ in range(3)] == [200] * 3
        client.credentials(HTTP_AUTHORIZATION=f"Token {'0' * 40}")
        assert [client.get("/api/studies/").status_code for _ in range(3)] == [401] * 3
    assert len([r for r in caplog.records if OUTAGE_TEXT in r.getMessage()]) == 1


def test_the_warning_repeats_once_per_interval(db, redis_cache, settings, caplog, monkeypatch):
    """With CACHE_OUTAGE_WARNING_SECONDS=1, 23 requests over 2.2 s of the backend's clock log
    three warnings (at 0, 1 and 2 s), not one per request.

    The backend's monotonic clock is the test's: each request moves it 0.1 s, so the count does
    not depend on how many requests the machine manages in real seconds."""
    settings.CACHE_OUTAGE_WARNING_SECONDS = 1
    staff = User.objects.create_user("ann", is_staff=True, is_superuser=True)
    client = APIClient(REMOTE_ADDR="198.51.100.9")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff).key}")
    redis_cache.stop()
    now = {"s": 1000.0}
    monkeypatch.setattr(cache_backend, "time", SimpleNamespace(monotonic=lambda: now["s"]))
    with caplog.at_level(logging.WARNING, logger="spotlight_study.cache_backend"):
        for step in range(23):  # 0.0, 0.1, ..., 2.2 s
            now["s"] = 1000.0 + step / 10
            assert client.get("/api/studies/").status_code == 200
    warnings = len([r for r in caplog.records if OUTAGE_TEXT in r.getMessage()])
    assert warnings == 3, warnings


@pytest.fixture
def cache_outage_server(own_redis, monkeypatch, transactional_db, tmp_path, demo_data):
    """The Procfile's uWSGI (one worker) with CACHE_URL on the test's own Redis, the default
    ENTRY_RATE_LIMIT and the demo study."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    monkeypatch.setenv("CACHE_URL", own_redis.url)
    monkeypatch.setenv("ENTRY_RATE_LIMIT", "30/m")
    monkeypatch.setenv("AXES_FAILURE_LIMIT", "5")
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    server = _start_server(command, tmp_path)
    yield server
    server.stop()


def test_through_uwsgi_redis_down_serves_arrivals_and_apis_and_keeps_the_lockout(
    cache_outage_server, own_redis, demo_data, real_password_hashers
):
    """Through the Procfile's server with Redis stopped: arrivals 302, API 200/401, one
    warning in the log, and 5 wrong logins still lock the account (axes counts in the database)."""
    staff = User.objects.create_user("carol", password="right-horse-battery-staple", is_staff=True, is_superuser=True)
    good = Token.objects.create(user=staff).key
    url = cache_outage_server.url
    own_redis.stop()
    with httpx.Client(base_url=url, timeout=30, trust_env=False) as c:
        arrivals = [c.get(f"/s/{demo_data['slug']}/", params=_ids()).status_code for _ in range(5)]
        api_good = [c.get("/api/studies/", headers={"Authorization": f"Token {good}"}).status_code for _ in range(3)]
        api_bad = [c.get("/api/studies/", headers={"Authorization": f"Token {'1' * 40}"}).status_code for _ in range(3)]
        annotator_api = c.get(
            f"/annotate/api/{demo_data['slug']}/next/", headers={"Authorization": f"Token {good}"}
        ).status_code

        def login(password: str) -> int:
            form = c.get("/accounts/login/")
            return c.post(
                "/accounts/login/",
                data={"username": "carol", "password": password, "csrfmiddlewaretoken": csrf_token(form.text)},
                headers={"Referer": f"{url}/accounts/login/"},
            ).status_code

        logins = [login(f"guess-{i}") for i in range(5)] + [login("right-horse-battery-staple")]
    log = cache_outage_server.stop()
    assert arrivals == [302] * 5, log[-3000:]
    assert Participant.objects.count() == 5
    assert api_good == [200] * 3 and api_bad == [401] * 3, log[-3000:]
    assert annotator_api != 500
    assert logins == [200] * 4 + [429, 429], log[-3000:]
    assert log.count(OUTAGE_TEXT) == 1, log[-3000:]
    assert "Traceback" not in log


# -- the file cache of serve.sh on a full disk ------------------------------------------------


def test_settings_turn_a_file_cache_url_into_the_fail_soft_backend():
    """CACHE_URL=filecache://… (what serve.sh sets) gives FailSoftFileBasedCache (settings.py)."""
    import os

    env = {**os.environ, "CACHE_URL": "filecache:///tmp/spotlight-cache-probe",
           "DJANGO_SETTINGS_MODULE": "spotlight_study.settings"}
    out = run_python("-c", "import django; django.setup(); from django.conf import settings as s; "
                     "print(s.CACHES['default']['BACKEND'])", env=env, timeout=60)
    assert out.stdout.split() == ["spotlight_study.cache_backend.FailSoftFileBasedCache"], out.stderr


@pytest.fixture
def full_disk_cache(tmp_path, settings, monkeypatch):
    """Django's default cache as settings.py builds it for ``CACHE_URL=filecache://<dir>``, the
    directory on a 64 KiB tmpfs; yields that directory (fill it with ``tests/tinyfs.fill``)."""
    import environ
    from django.core.cache import caches

    with tiny_tmpfs(tmp_path / "cache") as directory:
        config = environ.Env.cache_url_config(f"filecache://{directory}")
        assert config["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache", config
        config["BACKEND"] = "spotlight_study.cache_backend.FailSoftFileBasedCache"  # settings.py's rewrite
        settings.CACHES = {"default": config}
        window_end = int(time.time()) + 30  # the fixed window must not turn mid-test (test_arrival)
        monkeypatch.setattr(ratelimit_core, "_get_window", lambda value, period: window_end)
        outage_warning_reset()
        yield directory
        outage_warning_reset()
        caches["default"].close()


def test_arrivals_are_let_through_while_the_file_cache_disk_is_full(demo_study, full_disk_cache, settings, caplog):
    """Disk full (ENOSPC on the counter's write): 5 arrivals over a 2/m limit all get in, bad
    and good API tokens get 401 and 200, and one warning is logged; with room again the limit
    counts (302, 302, 429)."""
    settings.ENTRY_RATE_LIMIT = "2/m"
    staff = User.objects.create_user("ann", is_staff=True, is_superuser=True)
    good = Token.objects.create(user=staff).key
    print("filled", fill(full_disk_cache), "bytes")
    arrive = lambda: Client(REMOTE_ADDR="203.0.113.51").get(f"/s/{demo_study.slug}/", _ids())  # noqa: E731
    with caplog.at_level(logging.WARNING, logger="spotlight_study.cache_backend"):
        codes = [arrive().status_code for _ in range(5)]
        api = APIClient(REMOTE_ADDR="198.51.100.10")
        api.credentials(HTTP_AUTHORIZATION=f"Token {'0' * 40}")
        bad = [api.get("/api/studies/").status_code for _ in range(3)]
        api.credentials(HTTP_AUTHORIZATION=f"Token {good}")
        good_codes = [api.get("/api/studies/").status_code for _ in range(3)]
    assert codes == [302] * 5 and bad == [401] * 3 and good_codes == [200] * 3, (codes, bad, good_codes)
    assert Participant.objects.count() == 5
    warnings = [r.getMessage() for r in caplog.records if FILE_OUTAGE_TEXT in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]

    free(full_disk_cache)
    assert [arrive().status_code for _ in range(3)] == [302, 302, 429]


def test_the_file_cache_answers_as_an_empty_cache_on_a_full_disk(full_disk_cache, caplog):
    """On a full disk every cache operation answers as an empty cache that keeps nothing (and
    ``incr`` of a key stored before raises ValueError, so django-ratelimit fails open)."""
    from django.core.cache import cache

    cache.set("kept", 1, 60)
    fill(full_disk_cache)
    with caplog.at_level(logging.WARNING, logger="spotlight_study.cache_backend"):
        assert cache.add("new", 1, 60) is False
        cache.set("new", 1, 60)
        assert cache.get("new") is None and cache.has_key("new") is False
        assert cache.set_many({"a": 1, "b": 2}) in ([], None) and cache.get_many(["a", "b"]) == {}
        with pytest.raises(ValueError):
            cache.incr("kept")
        with pytest.raises(ValueError):
            cache.incr("new")
    assert cache.get("kept") == 1  # what was stored before is still read
    assert len([r for r in caplog.records if FILE_OUTAGE_TEXT in r.getMessage()]) == 1


@pytest.fixture
def full_disk_serve_sh_server(transactional_db, tmp_path, monkeypatch, demo_data):
    """serve.sh's uWSGI command with its file cache on a 64 KiB tmpfs (yields the server and the
    cache directory), the default ENTRY_RATE_LIMIT and the demo study."""
    from spotlight_study.studies.services import study_import

    from .conftest import serve_sh_server_command

    study_import(data=demo_data)
    with tiny_tmpfs(tmp_path / "cache") as directory:
        monkeypatch.setenv("CACHE_URL", f"filecache://{directory}")
        monkeypatch.setenv("ENTRY_RATE_LIMIT", "30/m")
        server = _start_server(serve_sh_server_command(), tmp_path)
        try:
            yield server, directory
        finally:
            server.stop()


def test_through_serve_sh_a_full_disk_lets_arrivals_in_with_one_warning(full_disk_serve_sh_server, demo_data):
    """serve.sh's uWSGI with its file cache on a full disk: 5 arrivals 302 (not 500), one
    warning line in the log and no traceback; once there is room, arrivals are counted again."""
    server, directory = full_disk_serve_sh_server
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as c:
        assert c.get(f"/s/{demo_data['slug']}/", params=_ids()).status_code == 302  # room: counted
        fill(directory)
        arrivals = [c.get(f"/s/{demo_data['slug']}/", params=_ids()).status_code for _ in range(5)]
        free(directory)
        after = c.get(f"/s/{demo_data['slug']}/", params=_ids()).status_code
    log = server.stop()
    assert arrivals == [302] * 5 and after == 302, log[-3000:]
    assert Participant.objects.count() == 7
    assert log.count(FILE_OUTAGE_TEXT) == 1, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
