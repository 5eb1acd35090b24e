"""Arrival checks at /s/<slug>/: the linked Prolific study, repeated parameters, reused sessions
and the arrival rate limit. Every refusal shows a page and creates nothing."""
from __future__ import annotations

import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.core.cache import cache
from django_ratelimit import core as ratelimit_core
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.participation.ratelimit import client_address
from spotlight_study.prolific.models import ProlificStudy

from ..conftest import Walker, new_id
from ..parallel import redis_test_url
from ..processes import run_python
from ..security.conftest import _start_server, procfile_web_command


def enter(client, slug: str, query: str, **extra):
    """GET the study link with a raw query string (so a parameter can be repeated)."""
    return client.get(f"/s/{slug}/?{query}", **extra)


def ids(pid=None, study=None, session=None) -> dict[str, str]:
    """A full set of valid Prolific URL parameters."""
    return {"PROLIFIC_PID": pid or new_id(), "STUDY_ID": study or new_id(), "SESSION_ID": session or new_id()}


def qs(params: dict[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in params.items())


@pytest.fixture
def linked_study(demo_study) -> ProlificStudy:
    """The demo study linked to a Prolific study."""
    return ProlificStudy.objects.create(study=demo_study, prolific_id=new_id(), description="d", reward_minor_units=1)


# --- the linked Prolific study -------------------------------------------------------------


def test_linked_study_refuses_another_study_id(client, linked_study):
    """A STUDY_ID that is not the linked Prolific study's id gets a clear 400 page; nothing is created."""
    response = client.get(f"/s/{linked_study.study.slug}/", ids())
    assert response.status_code == 400
    html = response.content.decode()
    assert "This link belongs to another Prolific study" in html and "STUDY_ID" in html
    assert Participant.objects.count() == 0
    assert client.get(f"/s/{linked_study.study.slug}/step/").status_code == 403  # no session bound


def test_linked_study_accepts_its_own_study_id(client, linked_study):
    """The linked Prolific study's id as STUDY_ID starts the flow."""
    response = client.get(f"/s/{linked_study.study.slug}/", ids(study=linked_study.prolific_id))
    assert response.status_code == 302 and response["Location"].endswith("/step/")
    assert Participant.objects.get().prolific_study_id == linked_study.prolific_id


def test_unlinked_study_accepts_any_study_id(client, demo_study):
    """Without a Prolific link any well-formed STUDY_ID is accepted (e.g. a study run elsewhere)."""
    assert client.get(f"/s/{demo_study.slug}/", ids()).status_code == 302
    assert Participant.objects.count() == 1


def test_a_resume_with_another_study_id_is_refused(demo_study):
    """A participant who arrived before the link is not resumed through a link of another study."""
    w = Walker(Client(), demo_study.slug)
    w.enter()
    ProlificStudy.objects.create(study=demo_study, prolific_id=new_id(), description="d", reward_minor_units=1)
    again = Walker(Client(), demo_study.slug, pid=w.pid).enter(STUDY_ID=new_id())
    assert again.status_code == 400
    assert Participant.objects.count() == 1


# --- repeated parameters -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"])
def test_a_parameter_given_twice_with_different_values_is_refused(client, demo_study, name):
    """?NAME=a&NAME=b is refused with a page naming the parameter, not read as its last value."""
    params = ids()
    response = enter(client, demo_study.slug, f"{name}={new_id()}&" + qs(params))
    assert response.status_code == 400
    assert f"{name} is given more than once, with different values." in response.content.decode()
    assert Participant.objects.count() == 0


def test_a_parameter_given_twice_with_the_same_value_passes(client, demo_study):
    """A parameter repeated with the same value (a link pasted twice) is accepted."""
    params = ids()
    response = enter(client, demo_study.slug, f"PROLIFIC_PID={params['PROLIFIC_PID']}&" + qs(params))
    assert response.status_code == 302
    assert Participant.objects.get().prolific_pid == params["PROLIFIC_PID"]


def test_a_repeated_parameter_with_an_invalid_value_names_the_conflict(client, demo_study):
    """A valid and a malformed value of one parameter: the conflict is named once, nothing created."""
    response = enter(client, demo_study.slug, "SESSION_ID=nothex&" + qs(ids()))
    html = response.content.decode()
    assert response.status_code == 400 and html.count("SESSION_ID") == 1
    assert "SESSION_ID is given more than once" in html and Participant.objects.count() == 0


# --- reused SESSION_ID ---------------------------------------------------------------------


def test_a_session_id_used_by_another_pid_is_refused(demo_study):
    """A second PID arriving with a SESSION_ID already used in the study gets a 409 page."""
    session = new_id()
    first = Client().get(f"/s/{demo_study.slug}/", ids(session=session))
    assert first.status_code == 302
    second = Client().get(f"/s/{demo_study.slug}/", ids(session=session))
    assert second.status_code == 409
    assert "This Prolific session was already used" in second.content.decode()
    assert Participant.objects.count() == 1


def test_the_same_pid_and_session_resumes(demo_study):
    """The same PID with its own SESSION_ID again (a reload of the link) resumes, creating nothing."""
    params = ids()
    client = Client()
    assert client.get(f"/s/{demo_study.slug}/", params).status_code == 302
    assert Client().get(f"/s/{demo_study.slug}/", params).status_code == 302
    assert Participant.objects.count() == 1


# --- the arrival rate limit ----------------------------------------------------------------


@pytest.fixture
def rate_limit(settings, monkeypatch):
    """Set ENTRY_RATE_LIMIT for the test on a fresh local-memory cache; returns a setter.

    django-ratelimit counts in fixed windows whose edge falls at a fixed second of each period:
    a test whose arrivals straddle that edge (a slow first request on a busy machine) would see
    the count restart. The window's end is pinned 30 s ahead for the test, in this process only;
    the counting itself is django-ratelimit's, in the cache.
    """
    window_end = int(time.time()) + 30
    monkeypatch.setattr(ratelimit_core, "_get_window", lambda value, period: window_end)
    cache.clear()

    def set_rate(rate: str) -> None:
        settings.ENTRY_RATE_LIMIT = rate

    yield set_rate
    cache.clear()


def arrive_from(slug: str, address: str, pid: str | None = None, **headers):
    """One arrival from ``address`` (REMOTE_ADDR) with fresh IDs."""
    return Client(REMOTE_ADDR=address).get(f"/s/{slug}/", ids(pid=pid), **headers)


def test_over_the_limit_arrivals_get_a_friendly_429(demo_study, rate_limit):
    """With 3/m, the fourth new participant from one address gets 429, Retry-After and a plain page."""
    rate_limit("3/m")
    for _ in range(3):
        assert arrive_from(demo_study.slug, "203.0.113.7").status_code == 302
    refused = arrive_from(demo_study.slug, "203.0.113.7")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 65
    html = refused.content.decode()
    assert "Please wait a moment" in html and "Nothing has been recorded" in html
    assert Participant.objects.count() == 3
    assert arrive_from(demo_study.slug, "203.0.113.8").status_code == 302  # another address


def test_resumes_are_not_counted_and_pass_over_the_limit(demo_study, rate_limit):
    """Reopening the link as an existing participant neither counts nor is refused."""
    rate_limit("2/m")
    pid = new_id()
    assert arrive_from(demo_study.slug, "198.51.100.1", pid=pid).status_code == 302
    for _ in range(5):
        assert arrive_from(demo_study.slug, "198.51.100.1", pid=pid).status_code == 302
    assert arrive_from(demo_study.slug, "198.51.100.1").status_code == 302
    assert arrive_from(demo_study.slug, "198.51.100.1").status_code == 429
    assert arrive_from(demo_study.slug, "198.51.100.1", pid=pid).status_code == 302
    assert Participant.objects.count() == 2


def test_off_disables_the_limit(demo_study, rate_limit):
    """ENTRY_RATE_LIMIT=off lets 35 new participants in from one address within a minute."""
    rate_limit("off")
    codes = {arrive_from(demo_study.slug, "192.0.2.5").status_code for _ in range(35)}
    assert codes == {302} and Participant.objects.count() == 35


def test_refused_and_malformed_arrivals_create_nothing_over_the_limit(demo_study, rate_limit):
    """Over the limit, nothing is created and no session is bound."""
    rate_limit("1/m")
    assert arrive_from(demo_study.slug, "192.0.2.9").status_code == 302
    client = Client(REMOTE_ADDR="192.0.2.9")
    assert client.get(f"/s/{demo_study.slug}/", ids()).status_code == 429
    assert client.get(f"/s/{demo_study.slug}/step/").status_code == 403
    assert Participant.objects.count() == 1


def test_behind_a_trusted_proxy_the_forwarded_address_is_counted(demo_study, rate_limit, settings):
    """With TRUSTED_PROXY_COUNT=1, arrivals through one proxy address are counted per client."""
    rate_limit("1/m")
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    assert arrive_from(demo_study.slug, proxy, HTTP_X_FORWARDED_FOR="203.0.113.20").status_code == 302
    assert arrive_from(demo_study.slug, proxy, HTTP_X_FORWARDED_FOR="203.0.113.21").status_code == 302
    # A client cannot pick its address: the proxy appends the real one, which is counted.
    forged = arrive_from(demo_study.slug, proxy, HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.20")
    assert forged.status_code == 429


def test_client_address_rules(rf, settings):
    """REMOTE_ADDR by default; the proxy's entry with TRUSTED_PROXY_COUNT; garbage falls back; IPv6 by /64."""
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(rf.get("/", REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR="9.9.9.9")) == "192.0.2.1"
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(rf.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="a, 192.0.2.7")) == "192.0.2.7"
    assert client_address(rf.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="not-an-ip")) == "10.0.0.1"
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(rf.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="192.0.2.7")) == "10.0.0.1"
    settings.TRUSTED_PROXY_COUNT = 0
    a = client_address(rf.get("/", REMOTE_ADDR="2001:db8:1:2::10"))
    b = client_address(rf.get("/", REMOTE_ADDR="2001:db8:1:2:ffff::1"))
    assert a == b == "2001:db8:1:2::"


def test_the_counter_lives_in_a_shared_redis_cache(demo_study, rate_limit, settings):
    """With CACHES pointing at Redis, the count is kept there and still refuses the third arrival."""
    redis = pytest.importorskip("redis")
    try:
        redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    prefix = f"test-arrival-{secrets.token_hex(6)}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_test_url(),
            "KEY_PREFIX": prefix,
        }
    }
    rate_limit("2/m")
    try:
        assert arrive_from(demo_study.slug, "198.51.100.77").status_code == 302
        assert arrive_from(demo_study.slug, "198.51.100.77").status_code == 302
        assert arrive_from(demo_study.slug, "198.51.100.77").status_code == 429
        client = redis.Redis.from_url(redis_test_url())
        keys = client.keys(f"{prefix}:*")
        assert len(keys) == 1 and int(client.get(keys[0])) == 3
    finally:
        cache.clear()


@pytest.mark.parametrize("value", ["30/minute", "0/m", "lots", "30/m/h"])
def test_a_malformed_setting_stops_the_server_with_a_clear_message(value):
    """ENTRY_RATE_LIMIT that is not N/s|m|h|d or off refuses to start, naming the setting."""
    env = {**os.environ, "ENTRY_RATE_LIMIT": value, "DJANGO_SETTINGS_MODULE": "spotlight_study.settings"}
    result = run_python("-c", "import django; django.setup()", env=env, timeout=60)
    assert result.returncode != 0 and "ENTRY_RATE_LIMIT" in result.stderr and "30/m" in result.stderr


@pytest.fixture
def limited_procfile_server(monkeypatch, transactional_db, tmp_path, demo_data):
    """The Procfile's web command (uWSGI, one worker) with the default ENTRY_RATE_LIMIT=30/m
    and the demo study in the test database."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    monkeypatch.setenv("ENTRY_RATE_LIMIT", "30/m")
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    server = _start_server(command, tmp_path)
    yield server
    server.stop()


def test_a_burst_of_100_arrivals_through_the_web_server_gets_429s(limited_procfile_server, demo_data):
    """100 new participants from one address at once through the Procfile's uWSGI: 30 get in
    (60 if the minute's window turns during the burst), the rest get 429 and create nothing."""
    url = f"{limited_procfile_server.url}/s/{demo_data['slug']}/"

    def arrive(_):
        return httpx.get(url, params=ids(), timeout=30, follow_redirects=False, trust_env=False)

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(arrive, range(100)))
    codes = [r.status_code for r in responses]
    admitted, limited = codes.count(302), codes.count(429)
    assert admitted + limited == 100, sorted(set(codes))
    assert 30 <= admitted <= 60 and limited >= 40
    assert Participant.objects.count() == admitted
    refused = next(r for r in responses if r.status_code == 429)
    assert "Please wait a moment" in refused.text and int(refused.headers["Retry-After"]) >= 1
