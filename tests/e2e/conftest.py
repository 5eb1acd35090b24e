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

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_STUDY_FILE = REPO_ROOT / "fixtures" / "spotlight-replication.yaml"
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


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Path of Debian's Chromium; fails in CI and skips elsewhere when it is not installed."""
    if not CHROMIUM.exists():
        reason = (
            f"{CHROMIUM} is not installed (apt-get install chromium); the browser tests use "
            "Debian's Chromium because Playwright's own browser download does not work here."
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return str(CHROMIUM)


@pytest.fixture(scope="module", autouse=True)
def allow_async_unsafe():
    """Set ``DJANGO_ALLOW_ASYNC_UNSAFE`` for the e2e module only; restore it afterwards."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser(request, allow_async_unsafe, chromium_executable):
    """One headless Chromium per test module, with :data:`CHROMIUM_ARGS` and the module's own
    ``CHROMIUM_EXTRA_ARGS`` (a list of command-line switches) if it has one.

    Module scope, not session: between calls Playwright leaves its event loop marked as running
    in this thread, which should end before other test modules run.
    """
    from playwright.sync_api import sync_playwright

    extra = list(getattr(request.module, "CHROMIUM_EXTRA_ARGS", ()))
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_executable, headless=True, args=[*CHROMIUM_ARGS, *extra]
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh page in its own context (no cookies from other tests), Prolific routed offline."""
    context = browser.new_context()
    context.set_default_timeout(10_000)
    page = context.new_page()
    # No internet here: answer Prolific's completion page with a small local page.
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(
            status=200,
            content_type="text/html",
            body="<!doctype html><title>Prolific</title><h1>Submission complete</h1>",
        ),
    )
    yield page
    close_context(context)


@pytest.fixture
def live_demo_study(live_server):
    """The demo study imported from ``fixtures/spotlight-replication.yaml``, for the live server.

    ``live_server`` makes the test transactional, so the server thread sees the import.
    """
    from spotlight_study.studies.services import study_import_file

    return study_import_file(path=DEMO_STUDY_FILE)
