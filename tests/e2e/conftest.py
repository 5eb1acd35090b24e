"""Fixtures of the end-to-end browser tests (Playwright driving Debian's Chromium).

Playwright's sync API keeps an asyncio event loop in the test thread, and Django refuses ORM
calls from a thread with a running loop unless ``DJANGO_ALLOW_ASYNC_UNSAFE`` is set. The tests
still do their database setup before, and their database checks after, the browser work.

The variable is set only while the e2e tests run (``allow_async_unsafe``), not when this file is
imported: it is inherited by subprocesses, and ``manage.py check --deploy`` (tests/test_deploy.py)
rightly warns when it is set.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .contexts import close_context
from .prolific_page import start_completion_server

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_STUDY_FILE = REPO_ROOT / "fixtures" / "spotlight-replication.yaml"
#: Debian's chromium-headless-shell: Chromium's engine without the desktop browser around it,
#: which is what Playwright itself runs for headless tests. Per browser test it uses less than
#: half the CPU of the full Chromium below (docs/testing.md).
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
#: Debian's full Chromium, for a module that sets ``NEEDS_WINDOW = True``: a page that must lose
#: the focus when another tab comes to the front (the headless shell has no window to lose).
CHROMIUM = Path("/usr/bin/chromium")

# Playwright's assertions wait 5 s by default. The suite runs on every CPU in parallel, so a
# browser test shares the machine with another worker's servers and browsers: a page that
# reloads itself after Back (flow.js) can take longer than that. 15 s, still far from a hang.
expect.set_options(timeout=15_000)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium_executable(request) -> str:
    """Path of the browser for this module: :data:`HEADLESS_SHELL`, or :data:`CHROMIUM` when the
    module sets ``NEEDS_WINDOW = True`` or the shell is not installed. Fails in CI and skips
    elsewhere when the browser is missing."""
    wanted = [CHROMIUM] if getattr(request.module, "NEEDS_WINDOW", False) else [HEADLESS_SHELL, CHROMIUM]
    for path in wanted:
        if path.exists():
            return str(path)
    reason = (
        f"{wanted[0]} is not installed (apt-get install chromium chromium-headless-shell); the "
        "browser tests use Debian's Chromium because Playwright's own browser download does "
        "not work here."
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def prolific_completion(tmp_path_factory):
    """Prolific's completion page on 127.0.0.1 over HTTPS, one per worker (prolific_page.py)."""
    server = start_completion_server(tmp_path_factory.mktemp("prolific"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def chromium_args(request, prolific_completion) -> list[str]:
    """Command-line switches of this module's browsers: :data:`CHROMIUM_ARGS`, those that make
    app.prolific.com the local completion page, and the module's own ``CHROMIUM_EXTRA_ARGS``
    (a list of switches) if it has one."""
    extra = getattr(request.module, "CHROMIUM_EXTRA_ARGS", ())
    return [*CHROMIUM_ARGS, *prolific_completion.chromium_args, *extra]


@pytest.fixture(scope="module", autouse=True)
def allow_async_unsafe():
    """Set ``DJANGO_ALLOW_ASYNC_UNSAFE`` for the e2e module only; restore it afterwards."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser(allow_async_unsafe, chromium_executable, chromium_args):
    """One headless browser per test module (``chromium_executable``, ``chromium_args``).

    Module scope, not session: between calls Playwright leaves its event loop marked as running
    in this thread, which should end before other test modules run.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_executable, headless=True, args=chromium_args)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh page in its own context (no cookies from other tests). A participant who
    finishes lands on the local completion page (``prolific_completion``)."""
    context = browser.new_context()
    context.set_default_timeout(10_000)
    page = context.new_page()
    yield page
    close_context(context)


@pytest.fixture
def live_demo_study(live_server):
    """The demo study imported from ``fixtures/spotlight-replication.yaml``, for the live server.

    ``live_server`` makes the test transactional, so the server thread sees the import.
    """
    from spotlight_study.studies.services import study_import_file

    return study_import_file(path=DEMO_STUDY_FILE)
