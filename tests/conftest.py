"""Shared fixtures: the demo study, Prolific IDs, a participant walker and a staff user; the
suite's seed and Hypothesis profile."""
from __future__ import annotations

import copy
import os
import random
import re
import secrets
from pathlib import Path

import factory
import hypothesis
import pytest
from django.contrib.auth.models import User

from spotlight_study.studies.schema import parse_study_file

REPO = Path(__file__).resolve().parent.parent
DEMO_FILE = REPO / "fixtures" / "spotlight-replication.yaml"
SHARED_DATA = REPO.parent / "shared" / "data"


# Hypothesis: in CI every run tries the same examples (derandomized, no example database), so a
# red CI run is red again on a rerun; locally it explores, and a failure prints the blob that
# replays it (@reproduce_failure).
hypothesis.settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
hypothesis.settings.register_profile("dev", print_blob=True)
hypothesis.settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    """Draw the suite's seed once (``TEST_SEED`` in the environment repeats a run's draw)."""
    raw = os.environ.get("TEST_SEED", "").strip()
    config.spotlight_test_seed = int(raw) if raw.isdigit() else secrets.randbelow(2**32)


def pytest_report_header(config):
    """Print the seed at the top of every run, so a failure can be repeated with it."""
    seed = config.spotlight_test_seed
    return f"test seed: {seed} (repeat a run's random choices with TEST_SEED={seed})"


@pytest.fixture(autouse=True)
def _seeded_random(request):
    """Seed Python's ``random`` for each test from the suite's seed and the test's id.

    Every random choice a test makes with the ``random`` module is then repeated by
    ``TEST_SEED``, whatever ran before it; choices of their own (``random.Random(n)``,
    ``numpy.random.default_rng(n)``) are fixed by ``n``.
    """
    random.seed(f"{request.config.spotlight_test_seed}:{request.node.nodeid}")


class StaffFactory(factory.django.DjangoModelFactory):
    """A staff user (a researcher)."""

    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"researcher{n}")
    is_staff = True
    password = factory.django.Password("pw-for-tests-only")


def new_id() -> str:
    """A fresh, valid Prolific ID: 24 lowercase hex characters."""
    return secrets.token_hex(12)


@pytest.fixture
def demo_data() -> dict:
    """The demo study file, parsed (a fresh copy each time, safe to modify)."""
    return copy.deepcopy(parse_study_file(DEMO_FILE))


@pytest.fixture
def demo_study(db, demo_data):
    """The demo study imported into the test database, settings prefetched."""
    from spotlight_study.studies.selectors import study_get_with_settings
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    return study_get_with_settings(slug=demo_data["slug"])


@pytest.fixture
def staff_client(client, db):
    """A test client logged in as a staff user."""
    client.force_login(StaffFactory())
    return client


class Walker:
    """Drives one participant through the flow with Django's test client.

    Every POST reads the hidden ``token`` from the page the participant last saw, as a browser
    form would.
    """

    def __init__(self, client, slug: str, pid: str | None = None):
        self.client = client
        self.slug = slug
        self.pid = pid or new_id()
        self.last_page = None

    @property
    def step_url(self) -> str:
        return f"/s/{self.slug}/step/"

    def enter(self, **overrides):
        """Open the study link as Prolific would: ``STUDY_ID`` is the linked Prolific study's id
        when the study is linked (arrivals must carry it), else a random one."""
        from spotlight_study.participation.arrival import expected_study_ids
        from spotlight_study.studies.models import Study

        linked = sorted(expected_study_ids(study=Study.objects.get(slug=self.slug)))
        params = {"PROLIFIC_PID": self.pid, "STUDY_ID": linked[0] if linked else new_id(),
                  "SESSION_ID": new_id()}
        params.update(overrides)
        return self.client.get(f"/s/{self.slug}/", params)

    def page(self):
        self.last_page = self.client.get(self.step_url)
        return self.last_page

    def token(self, response=None) -> str:
        html = (response or self.last_page).content.decode()
        return re.search(r'name="token" value="([^"]+)"', html).group(1)

    def post(self, data: dict, token: str | None = None):
        payload = {"token": token or self.token(), **data}
        return self.client.post(self.step_url, payload)

    def consent(self, agree: bool = True):
        """Agree; or decline, then confirm on the page that asks again (the final response)."""
        self.page()
        if agree:
            return self.post({"decision": "agree"})
        asked = self.post({"decision": "decline"})
        self.last_page = self.client.get(asked["Location"])
        return self.post({"decision": "decline_confirmed"})

    def instructions(self):
        self.page()
        return self.post({})

    def answer_field(self, response=None) -> str:
        """The name of the answer box on the last page (``answer_<position>``)."""
        html = (response or self.last_page).content.decode()
        return re.search(r'<textarea name="(answer_\d+)"', html).group(1)

    def answer(self, text: str, events: str = ""):
        self.page()
        return self.post({self.answer_field(): text, "client_events": events})

    def survey(self, value: int = 4, comment: str = ""):
        page = self.page()
        names = sorted(set(re.findall(r'name="([cb]__[^"]+)"', page.content.decode())))
        return self.post({**{n: str(value) for n in names}, "comment": comment})

    def complete(self, training: str = "The first group fishes by day, the second at night."):
        self.enter()
        self.consent()
        self.instructions()
        self.answer(training)
        self.answer("Group 2 describes the doctor as a woman more often.")
        self.answer("Group 1 grows maize and beans, group 2 wheat.")
        return self.survey()


@pytest.fixture
def walker(client, demo_study):
    """A :class:`Walker` for a new participant of the demo study."""
    return Walker(client, demo_study.slug)


@pytest.fixture(autouse=True)
def _analysis_root(settings, tmp_path_factory):
    """Each test writes its analysis reports to a fresh directory, not to var/."""
    settings.ANALYSIS_ROOT = tmp_path_factory.mktemp("analysis-root")
