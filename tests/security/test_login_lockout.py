"""Brute-force protection: login lockout (django-axes) and API token throttling."""
from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from .conftest import csrf_token

PASSWORD = "right-horse-battery-staple"
ATTACKER = "203.0.113.7"


@pytest.fixture
def staff(db, settings):
    """A staff user (who may pay bonuses) with a known password.

    In-process tests hash with MD5 (tests/conftest.py) to keep them quick; the lockout does not
    depend on the hasher (the Procfile test below uses the real one).
    """
    return User.objects.create_user("alice", password=PASSWORD, is_staff=True, is_superuser=True)


def _login(client: Client, url: str, password: str, username: str = "alice"):
    return client.post(url, {"username": username, "password": password})


def _retry_at(html: str) -> datetime:
    """The lockout page's "try again after" time."""
    stamp = re.search(r'<time datetime="([^"]+)"', html).group(1)
    return datetime.fromisoformat(stamp)


def test_thirty_wrong_logins_lock_the_account_even_for_the_right_password(staff, settings):
    """30 wrong passwords lock the account; then the right one gets the 429 page with a time."""
    client = Client(REMOTE_ADDR=ATTACKER)
    statuses = [_login(client, "/accounts/login/", f"guess-{i}").status_code for i in range(30)]
    limit = settings.AXES_FAILURE_LIMIT
    assert statuses[: limit - 1] == [200] * (limit - 1)  # the form again, with its error
    assert statuses[limit - 1 :] == [429] * (30 - limit + 1)

    before = datetime.now(timezone.utc)
    response = _login(client, "/accounts/login/", PASSWORD)
    assert response.status_code == 429
    html = response.content.decode()
    assert "Too many login attempts" in html and "Even the right password is refused" in html
    retry_at = _retry_at(html)
    assert before + settings.AXES_COOLOFF_TIME - timedelta(seconds=60) <= retry_at
    assert retry_at <= datetime.now(timezone.utc) + settings.AXES_COOLOFF_TIME
    assert int(response["Retry-After"]) == int(settings.AXES_COOLOFF_TIME.total_seconds())
    assert "alice" not in html
    assert "_auth_user_id" not in client.session


def test_the_admin_login_is_locked_too(staff, settings):
    """Failures on /admin/login/ count, and lock the admin login and the site login alike."""
    client = Client(REMOTE_ADDR=ATTACKER)
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "/admin/login/?next=/admin/", f"guess-{i}")
    response = _login(client, "/admin/login/?next=/admin/", PASSWORD)
    assert response.status_code == 429 and b"Try again after" in response.content
    assert _login(client, "/accounts/login/", PASSWORD).status_code == 429
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_lockout_is_per_account_and_address(staff, settings):
    """A lockout of alice at one address leaves alice elsewhere, and bob there, free to log in."""
    User.objects.create_user("bob", password=PASSWORD, is_staff=True)
    attacker = Client(REMOTE_ADDR=ATTACKER)
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(attacker, "/accounts/login/", f"guess-{i}")
    assert _login(attacker, "/accounts/login/", PASSWORD).status_code == 429

    assert _login(Client(REMOTE_ADDR="198.51.100.20"), "/accounts/login/", PASSWORD).status_code == 302
    assert _login(Client(REMOTE_ADDR=ATTACKER), "/accounts/login/", PASSWORD, username="bob").status_code == 302


def test_a_spoofed_forwarded_for_header_does_not_escape_the_lockout(staff, settings):
    """Without a trusted proxy, a new X-Forwarded-For per guess is ignored: the lockout holds."""
    client = Client(REMOTE_ADDR=ATTACKER)
    for i in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            "/accounts/login/",
            {"username": "alice", "password": f"guess-{i}"},
            HTTP_X_FORWARDED_FOR=f"192.0.2.{i + 1}",
        )
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD}, HTTP_X_FORWARDED_FOR="192.0.2.200"
    )
    assert response.status_code == 429


def test_behind_a_trusted_proxy_the_lockout_counts_the_client_not_the_proxy(staff, settings):
    """TRUSTED_PROXY_COUNT=1, every request from the proxy's address: the client the proxy names
    in X-Forwarded-For is locked out, another client behind the same proxy is not."""
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = Client(REMOTE_ADDR="127.0.0.1")
    for i in range(settings.AXES_FAILURE_LIMIT):
        proxy.post("/accounts/login/", {"username": "alice", "password": f"guess-{i}"},
                   HTTP_X_FORWARDED_FOR=ATTACKER)
    locked = proxy.post("/accounts/login/", {"username": "alice", "password": PASSWORD},
                        HTTP_X_FORWARDED_FOR=ATTACKER)
    assert locked.status_code == 429
    other = Client(REMOTE_ADDR="127.0.0.1").post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD}, HTTP_X_FORWARDED_FOR="198.51.100.20"
    )
    assert other.status_code == 302


def test_the_lockout_ends_after_the_cool_off(staff, settings):
    """Once the cool-off has passed without a further attempt, the right password works again."""
    settings.AXES_COOLOFF_TIME = timedelta(seconds=2)
    client = Client(REMOTE_ADDR=ATTACKER)
    for i in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "/accounts/login/", f"guess-{i}")
    assert _login(client, "/accounts/login/", PASSWORD).status_code == 429  # starts the wait again
    time.sleep(2.5)
    response = _login(client, "/accounts/login/", PASSWORD)
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(staff.pk)


def test_procfile_server_locks_the_account_after_thirty_wrong_logins(procfile_server, real_password_hashers):
    """Through the Procfile's uWSGI command: 30 wrong logins lock; the right password gets 429."""
    from django.conf import settings

    User.objects.create_user("carol", password=PASSWORD, is_staff=True)
    with httpx.Client(base_url=procfile_server.url, timeout=30) as c:
        def attempt(password: str) -> httpx.Response:
            form = c.get("/accounts/login/")
            return c.post(
                "/accounts/login/",
                data={"username": "carol", "password": password, "csrfmiddlewaretoken": csrf_token(form.text)},
                headers={"Referer": f"{procfile_server.url}/accounts/login/"},
            )

        statuses = [attempt(f"guess-{i}").status_code for i in range(30)]
        right = attempt(PASSWORD)
    limit = settings.AXES_FAILURE_LIMIT
    assert statuses == [200] * (limit - 1) + [429] * (30 - limit + 1)
    assert right.status_code == 429 and "Try again after" in right.text


# --- the API -----------------------------------------------------------------------------------


def test_bad_api_tokens_are_throttled_per_address(staff):
    """After 20 bad tokens a minute from one address: 429 with Retry-After, even for a good token."""
    good = Token.objects.create(user=staff).key
    attacker = APIClient(REMOTE_ADDR=ATTACKER)
    statuses = []
    for i in range(25):
        attacker.credentials(HTTP_AUTHORIZATION=f"Token {i:040x}")
        statuses.append(attacker.get("/api/studies/").status_code)
    assert statuses == [401] * 20 + [429] * 5

    attacker.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    response = attacker.get("/api/studies/")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert response.json()["error"]["status"] == 429

    elsewhere = APIClient(REMOTE_ADDR="198.51.100.20")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert elsewhere.get("/api/studies/").status_code == 200


def test_good_tokens_are_not_counted_as_failures(staff):
    """Many requests with a valid token from one address are all served."""
    good = Token.objects.create(user=staff).key
    client = APIClient(REMOTE_ADDR=ATTACKER)
    client.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert {client.get("/api/studies/").status_code for _ in range(30)} == {200}
