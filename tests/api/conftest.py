"""Fixtures of the researcher API tests: token clients for staff, annotators and nobody."""
from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ..annotation.conftest import make_user


@pytest.fixture(autouse=True)
def _no_background_jobs(settings):
    """Stimulus jobs created through the API stay queued (no thread, no broker, no network)."""
    settings.STIMULI_JOB_RUNNER = "manual"


@pytest.fixture
def staff_user(db):
    """A staff user (a researcher)."""
    return make_user("api-researcher", staff=True)


@pytest.fixture
def api(staff_user) -> APIClient:
    """An API client authenticated as staff with a token (`Authorization: Token <key>`)."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff_user).key}")
    return client


@pytest.fixture
def annotator_api(db) -> APIClient:
    """An API client with the token of a member of `annotators` (not staff)."""
    client = APIClient()
    user = make_user("api-annotator", "annotators")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client
