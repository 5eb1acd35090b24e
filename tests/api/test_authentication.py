"""Token authentication (api/authentication.py): a key no token can have is a 401 on SQLite and
PostgreSQL alike, and it counts towards the bad-token limit."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from ..annotation.conftest import make_user

#: Keys that no stored token has; each used to reach the token lookup, where PostgreSQL refused
#: the NUL with a DataError (a 500 on every API URL, without logging in).
IMPOSSIBLE_KEYS = [
    "abc\x00def",
    "\x00" * 40,
    "0123456789abcdef0123456789abcdef0123456\x00",
    "tab\x07bell",
    "f" * 41,
]


@pytest.mark.parametrize("key", IMPOSSIBLE_KEYS, ids=["nul-inside", "all-nul", "nul-last", "bell", "too-long"])
@pytest.mark.parametrize("path", ["/api/studies/", "/api/studies/{slug}/", "/api/stimuli/sets/", "/api/schema/"])
def test_an_impossible_token_key_is_401_not_500(demo_study, key, path):
    """`Authorization: Token <key with NUL or too long>` on researcher API URLs: 401 with the
    JSON error body (the annotator API reads sessions only and never sees the header)."""
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get(path.format(slug=demo_study.slug))
    assert response.status_code == 401, response.content[:300]
    assert response.json()["error"]["code"] == "authentication_failed"


def test_impossible_keys_count_towards_the_bad_token_limit(db, monkeypatch):
    """With a limit of 3 bad tokens a minute, NUL keys are refused 401 three times, then 429,
    and then even a good token from that address waits (429)."""
    from django.core.cache import cache
    from rest_framework.authtoken.models import Token

    from spotlight_study.api.authentication import TokenFailureThrottle

    # DRF reads the rates once, into the class; the limit of this test goes there.
    monkeypatch.setattr(TokenFailureThrottle, "THROTTLE_RATES", {"token_failure": "3/min"})
    cache.clear()
    good = Token.objects.create(user=make_user("nul-researcher", staff=True)).key
    client = APIClient(REMOTE_ADDR="192.0.2.77", raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION="Token a\x00b")
    assert [client.get("/api/studies/").status_code for _ in range(4)] == [401, 401, 401, 429]
    client.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert client.get("/api/studies/").status_code == 429
    cache.clear()
    assert client.get("/api/studies/").status_code == 200
