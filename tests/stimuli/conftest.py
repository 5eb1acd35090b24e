"""Fixtures of the stimuli tests: the local OpenAI-compatible server, real LLM outputs, helpers
to run Django commands in a subprocess against the test database."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED_DATA  # noqa: F401  (REPO: imported from here by the job tests)
from tests.openai_server import FakeOpenAI
from tests.processes import start_python

LLM_OUTPUTS = SHARED_DATA / "llm-outputs"
SMITH = LLM_OUTPUTS / "llama3_doctor_smith_500.json"
LI = LLM_OUTPUTS / "llama3_doctor_li_500.json"
FARMING = LLM_OUTPUTS / "gpt4o-mini_farming_kansas_kenya_500.json"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the real LLM outputs live in ../shared/data/llm-outputs/.")
    return path


@pytest.fixture(scope="session")
def smith_li_outputs() -> tuple[list[str], list[str]]:
    """The 500 Smith and 500 Li stories (Llama 3.1; Hedderich et al. 2025, CC BY 4.0)."""
    smith = json.loads(_need(SMITH).read_text())["prompt_1"]["outputs"]
    li = json.loads(_need(LI).read_text())["prompt_1"]["outputs"]
    return smith, li


@pytest.fixture(scope="session")
def farming_path() -> Path:
    """Path of the Kansas vs Kenya file (GPT-4o-mini; instances stored as whitespace tokens)."""
    return _need(FARMING)


@pytest.fixture(scope="session")
def smith_li_paths() -> tuple[Path, Path]:
    """Paths of the Smith and Li files."""
    return _need(SMITH), _need(LI)


@pytest.fixture
def api_key() -> str:
    """A fresh secret API key for one test."""
    return f"sk-test-{secrets.token_hex(16)}"


@pytest.fixture
def openai_server(api_key):
    """A running :class:`FakeOpenAI` on 127.0.0.1 expecting ``api_key``."""
    server = FakeOpenAI(api_key).start()
    yield server
    server.stop()


@pytest.fixture
def openai_settings(settings, openai_server, api_key):
    """Point the app at the local server; jobs are started by hand (``manual`` runner)."""
    settings.OPENAI_BASE_URL = openai_server.url
    settings.OPENAI_API_KEY = api_key
    settings.OPENAI_MAX_RETRIES = 3
    settings.OPENAI_TIMEOUT_SECONDS = 60  # a hang guard: a retry after a timeout would change the counts
    settings.STIMULI_GENERATION_CONCURRENCY = 2
    settings.STIMULI_JOB_RUNNER = "manual"
    return settings


def database_url_for_subprocess() -> str:
    """A ``DATABASE_URL`` for the test database, for subprocesses (the test DB name differs)."""
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of a Django subprocess using the test database."""
    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        {
            "DATABASE_URL": database_url_for_subprocess(),
            "DJANGO_SETTINGS_MODULE": "spotlight_study.settings",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "DEBUG",  # everything the app and the openai client log, for the key check
        }
    )
    env.update(extra)
    return env


def manage(*args: str, env: dict[str, str], **kwargs) -> subprocess.Popen:
    """Start ``manage.py ARGS`` in the repository with ``env``; output captured."""
    return start_python("manage.py", *args, env=env, **kwargs)


def wait_for(predicate, *, timeout_s: float = 60, interval_s: float = 0.05, what: str = "condition"):
    """Poll ``predicate()`` until it is truthy; fail after ``timeout_s`` seconds (a hang guard,
    generous for a busy machine: no test asserts how soon a state comes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    pytest.fail(f"Timed out after {timeout_s} s waiting for {what}.")


@pytest.fixture
def mined_job(db, settings):
    """A succeeded Premise job on a small she/he set, one output containing markup."""
    from spotlight_study.stimuli.importers import ImportedGroups
    from spotlight_study.stimuli.models import JobStatus
    from spotlight_study.stimuli.jobs.runner import job_run_now
    from spotlight_study.stimuli.services import mining_job_create, stimulus_set_import
    from spotlight_study.stimuli.tasks import MINING

    settings.STIMULI_JOB_RUNNER = "manual"
    g1 = [f"He treats patient {i}. He smiles." for i in range(20)] + ["<b>He</b> & co."]
    g2 = [f"She treats patient {i}. She smiles." for i in range(20)] + ['She wrote <script>alert("x")</script>.']
    stimulus_set = stimulus_set_import(title="pronouns", groups=ImportedGroups(g1, g2))
    job = mining_job_create(stimulus_set=stimulus_set, method="premise")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    return job
