"""Shared fixtures: the demo study, Prolific IDs, a participant walker and a staff user; the
suite's seed and Hypothesis profile."""
from __future__ import annotations

import copy
import gc
import itertools
import os
import random
import re
import secrets
from pathlib import Path

import hypothesis
import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from spotlight_study.studies.schema import parse_study_file

REPO = Path(__file__).resolve().parent.parent
DEMO_FILE = REPO / "fixtures" / "spotlight-replication.yaml"
SHARED_DATA = REPO.parent / "shared" / "data"


# Hypothesis: in CI every run tries the same examples (derandomized, no example database), so a
# red CI run is red again on a rerun; locally it explores, and a failure prints the blob that
# replays it (@reproduce_failure).
# No wall-clock limits in property tests either: Hypothesis's per-example deadline (200 ms) and
# its "too slow" health check (data generation timed) fail on a busy machine, not on a bug.
_NO_CLOCK = {"deadline": None, "suppress_health_check": [hypothesis.HealthCheck.too_slow]}
hypothesis.settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_NO_CLOCK)
hypothesis.settings.register_profile("dev", print_blob=True, **_NO_CLOCK)
hypothesis.settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    """Draw the suite's seed once (``TEST_SEED`` in the environment repeats a run's draw).

    Under pytest-xdist the controller draws it and hands it to every worker
    (:func:`pytest_configure_node`), so one printed seed repeats the whole parallel run.
    """
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None and "spotlight_test_seed" in worker_input:
        config.spotlight_test_seed = worker_input["spotlight_test_seed"]
        return
    raw = os.environ.get("TEST_SEED", "").strip()
    config.spotlight_test_seed = int(raw) if raw.isdigit() else secrets.randbelow(2**32)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Give an xdist worker the controller's seed (a hook of pytest-xdist, controller side)."""
    node.workerinput["spotlight_test_seed"] = node.config.spotlight_test_seed


def pytest_report_header(config):
    """Print the seed at the top of every run, so a failure can be repeated with it."""
    seed = config.spotlight_test_seed
    return f"test seed: {seed} (repeat a run's random choices with TEST_SEED={seed})"


#: Fixtures that start a browser, a server, a worker or a Redis of their own: a test using one
#: is ``slow`` (seconds, not milliseconds).
SLOW_FIXTURES = frozenset({
    "browser", "page", "live_server", "procfile_server", "serve_sh_server", "own_redis",
    "celery_worker_process", "cache_outage_server", "limited_procfile_server",
    "full_disk_serve_sh_server",
})
#: Test files whose every test starts processes (servers, deploys, backups, workers, generated
#: API requests by the hundred): all ``slow``.
SLOW_FILES = frozenset({
    "tests/test_deploy.py", "tests/test_deploy_kit.py", "tests/test_backup.py",
    "tests/test_health.py", "tests/bench/test_load_smoke.py", "tests/studies/test_hostile_files.py",
    "tests/api/test_schemathesis.py", "tests/stimuli/test_jobs_resume_by_themselves.py",
    "tests/stimuli/test_generation_restart.py", "tests/stimuli/test_broker_outage.py",
    "tests/annotation/test_llm_worker.py", "tests/security/test_transport.py",
    "tests/security/test_database_outage.py", "tests/researcher/test_analysis_worker.py",
    "tests/researcher/test_analysis_two_servers.py",
})


#: Tests between two heap freezes (:func:`pytest_runtest_teardown`).
FREEZE_EVERY = 20
_tests_since_freeze = 0


def pytest_collection_finish(session):
    """Freeze the heap that imports and collection built (``gc.freeze``): a full collection then
    scans only what tests made since. statsmodels' ``multipletests(method="holm")`` runs
    ``gc.collect()`` on every call, some 700 times a run, and over a whole test worker's heap each
    took tens of milliseconds."""
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """Every :data:`FREEZE_EVERY` tests, collect the garbage made since the last freeze, then
    freeze what is left: a worker's heap grows as it runs (compiled templates, queries, modules
    imported by tests), and without this every full collection scans all of it again. Measured on
    the not-slow tests, 3 workers: 24-25 s of collections per run before, 9-11 s after; each
    worker's peak memory stays about 450 MB (docs/testing.md)."""
    global _tests_since_freeze
    _tests_since_freeze += 1
    if _tests_since_freeze >= FREEZE_EVERY:
        _tests_since_freeze = 0
        gc.collect()
        gc.freeze()


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test that starts a process (:data:`SLOW_FIXTURES`,
    :data:`SLOW_FILES`, the ``browser`` marker). CI runs them all; locally
    ``-m "not slow"`` leaves them out."""
    for item in items:
        path = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
        if (path in SLOW_FILES or item.get_closest_marker("browser") is not None
                or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _seeded_random(request):
    """Seed Python's ``random`` for each test from the suite's seed and the test's id.

    Every random choice a test makes with the ``random`` module is then repeated by
    ``TEST_SEED``, whatever ran before it; choices of their own (``random.Random(n)``,
    ``numpy.random.default_rng(n)``) are fixed by ``n``.
    """
    random.seed(f"{request.config.spotlight_test_seed}:{request.node.nodeid}")


_staff_numbers = itertools.count()


def make_staff(username: str | None = None, **fields) -> User:
    """A staff user (a researcher), ``researcher<n>`` unless named; ``fields`` such as
    ``is_superuser=True`` are set on the user. Password ``pw-for-tests-only``. ``IntegrityError``
    if the username is taken."""
    return User.objects.create_user(
        username or f"researcher{next(_staff_numbers)}", password="pw-for-tests-only",
        **{"is_staff": True, **fields},
    )


@pytest.fixture(scope="session", autouse=True)
def _test_process_settings():
    """Two settings of the test process only (servers a test starts as processes keep the real
    ones), each worth tens of seconds a run (docs/testing.md):

    - MD5 for passwords: Django's PBKDF2 takes about 0.2 s a hash here, and the suite creates
      and logs in users by the hundred;
    - WhiteNoise looks a static file up when it is asked for (``WHITENOISE_AUTOREFRESH``), as
      with ``DEBUG`` on, instead of reading every static file's metadata whenever a middleware
      chain is built: every new test client builds one, and the suite builds about 1,400.
    """
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
                           WHITENOISE_AUTOREFRESH=True):
        yield


@pytest.fixture
def real_password_hashers(settings):
    """Django's own hashers for this test: for users who log in to a server the test starts as a
    process, which cannot read an MD5 hash."""
    from django.conf import global_settings

    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS


def new_id() -> str:
    """A fresh, valid Prolific ID: 24 lowercase hex characters."""
    return secrets.token_hex(12)


@pytest.fixture(scope="session")
def _demo_data_parsed() -> dict:
    """The demo study file, parsed once per worker (about 0.1 s a parse; never handed out)."""
    return parse_study_file(DEMO_FILE)


@pytest.fixture
def demo_data(_demo_data_parsed) -> dict:
    """The demo study file, parsed (a fresh copy each time, safe to modify)."""
    return copy.deepcopy(_demo_data_parsed)


@pytest.fixture
def demo_study(db, demo_data):
    """The demo study imported into the test database, settings prefetched."""
    from spotlight_study.studies.selectors import study_get_with_settings
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    return study_get_with_settings(slug=demo_data["slug"])


# Study membership (issue 40) for the tests written before it: their users of the old global
# groups and their ``is_staff`` users keep the access those gave, by the rule the migration
# applied to a running instance (studies/migrations/0014): a member of ``annotators``,
# ``adjudicators`` or ``researchers`` is a member of every study with that role, an ``is_staff``
# user is in ``lab admins``. Tests marked ``own_membership`` (the access tests) go without.
_LEGACY_ROLE = {"annotators": "annotator", "adjudicators": "adjudicator", "researchers": "researcher"}


def _legacy_members_for_study(sender, instance, created, raw=False, **kwargs):
    if not created or raw:
        return
    from spotlight_study.studies.models import StudyMember

    rows = [
        StudyMember(study=instance, user=user, role=role)
        for group, role in _LEGACY_ROLE.items()
        for user in User.objects.filter(groups__name=group)
    ]
    StudyMember.objects.bulk_create(rows, ignore_conflicts=True)


def _legacy_members_for_groups(sender, instance, action, pk_set, model, **kwargs):
    if action != "post_add" or not isinstance(instance, User):
        return
    from django.contrib.auth.models import Group

    from spotlight_study.studies.models import Study, StudyMember

    roles = [_LEGACY_ROLE[n] for n in Group.objects.filter(pk__in=pk_set).values_list("name", flat=True) if n in _LEGACY_ROLE]
    rows = [StudyMember(study=s, user=instance, role=r) for r in roles for s in Study.objects.all()]
    StudyMember.objects.bulk_create(rows, ignore_conflicts=True)


def _legacy_staff_is_lab_admin(sender, instance, created, raw=False, **kwargs):
    if created and not raw and instance.is_staff and not instance.is_superuser:
        from django.contrib.auth.models import Group

        from spotlight_study.accounts.roles import LAB_ADMINS

        instance.groups.add(Group.objects.get_or_create(name=LAB_ADMINS)[0])


@pytest.fixture(autouse=True)
def _legacy_membership(request):
    """The shim above, connected for the test unless it is marked ``own_membership``."""
    if request.node.get_closest_marker("own_membership"):
        yield
        return
    from django.db.models.signals import m2m_changed, post_save

    from spotlight_study.studies.models import Study

    hooks = [
        (post_save, _legacy_members_for_study, Study),
        (m2m_changed, _legacy_members_for_groups, User.groups.through),
        (post_save, _legacy_staff_is_lab_admin, User),
    ]
    for signal, receiver, sender in hooks:
        signal.connect(receiver, sender=sender, dispatch_uid=f"legacy-{receiver.__name__}")
    try:
        yield
    finally:
        for signal, receiver, sender in hooks:
            signal.disconnect(receiver, sender=sender, dispatch_uid=f"legacy-{receiver.__name__}")


@pytest.fixture
def staff_client(client, db):
    """A test client logged in as a staff user."""
    client.force_login(make_staff())
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
    """Each test stores its analysis outputs in a fresh directory (the ``analysis`` storage's
    file system), not under var/."""
    root = tmp_path_factory.mktemp("analysis-root")
    settings.ANALYSIS_ROOT = root
    settings.STORAGES = {**settings.STORAGES, "analysis": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(root)}}}
