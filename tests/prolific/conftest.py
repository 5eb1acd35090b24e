"""Fixtures of the Prolific tests: the fake Prolific server, a configured client and helpers."""
from __future__ import annotations

import pytest
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.prolific.client import ProlificClient
from spotlight_study.prolific.models import ProlificStudy

from ..conftest import Walker
from .fake_prolific import FakeProlific


@pytest.fixture
def fake_prolific():
    """A running :class:`FakeProlific` on 127.0.0.1, stopped after the test."""
    fake = FakeProlific().start()
    yield fake
    fake.stop()


class SleepRecorder:
    """Records the backoff delays instead of sleeping."""

    def __init__(self):
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    """A recorder to pass as the client's ``sleep``."""
    return SleepRecorder()


@pytest.fixture
def prolific_client(fake_prolific, sleeps):
    """A client of the fake server that records its backoff instead of sleeping."""
    client = ProlificClient(
        token=fake_prolific.token,
        base_url=fake_prolific.base_url,
        timeout_seconds=30,  # a hang guard: the fake server answers at once, unless the machine is busy
        max_retries=3,
        backoff_seconds=0.01,
        sleep=sleeps,
    )
    yield client
    client.close()


@pytest.fixture
def prolific_settings(settings, fake_prolific):
    """Django settings pointing at the fake server (token, base URL, short backoff)."""
    settings.PROLIFIC_API_TOKEN = fake_prolific.token
    settings.PROLIFIC_API_BASE_URL = fake_prolific.base_url
    settings.PROLIFIC_RETRY_BACKOFF_SECONDS = 0.001
    settings.PROLIFIC_TIMEOUT_SECONDS = 30  # a hang guard, as above
    settings.PROLIFIC_STUDY_BASE_URL = "https://study.example.org"
    return settings


@pytest.fixture
def linked(demo_study, fake_prolific, prolific_settings) -> ProlificStudy:
    """The demo study linked to a study that exists on the fake Prolific."""
    prolific_id = fake_prolific.add_study()
    return ProlificStudy.objects.create(
        study=demo_study, prolific_id=prolific_id, description="Compare two groups of texts.",
        reward_minor_units=200,
    )


def arrive(slug: str, *, complete: bool = False, training: str | None = None) -> tuple[Walker, Participant]:
    """A participant who enters the study (and completes it if asked); returns walker and row."""
    w = Walker(Client(), slug)
    if complete:
        if training is None:
            w.complete()
        else:
            w.complete(training=training)
    else:
        w.enter()
    return w, Participant.objects.get(study__slug=slug, prolific_pid=w.pid)
