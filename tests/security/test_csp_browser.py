"""The Content-Security-Policy in a real browser: nothing on the pages is blocked by it."""
from __future__ import annotations

import re
import secrets

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from ..e2e.conftest import (  # noqa: F401
    allow_async_unsafe, browser, chromium_args, chromium_executable, live_demo_study, page, prolific_completion,
)

pytestmark = pytest.mark.browser

# Chromium reports every blocked resource or inline snippet as a securitypolicyviolation event.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


def _violations(page: Page) -> list[str]:
    return page.evaluate("window.__cspViolations || []")


def test_participant_pages_run_under_the_policy(page, live_server, live_demo_study):
    """Consent, instructions and a task page with flow.js active: no CSP violation."""
    page.add_init_script(RECORD_VIOLATIONS)
    messages = []
    page.on("console", lambda m: messages.append(m.text))
    pid = secrets.token_hex(12)
    page.goto(f"{live_server.url}/s/{live_demo_study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={secrets.token_hex(12)}&SESSION_ID={secrets.token_hex(12)}")
    expect(page.get_by_role("heading", name="Consent")).to_be_visible()
    assert _violations(page) == []
    page.get_by_role("button", name="I agree and want to take part").click()
    page.get_by_role("button", name="Continue").click()
    # flow.js rewrites the counter on load: the script was allowed to run.
    expect(page.locator("#answer-counter")).to_have_text(re.compile(r"^[\d,]+ of at most [\d,]+ characters\.$"))
    # The stylesheet applied: buttons get the accent background from study.css.
    assert page.locator("button[type=submit]").evaluate("b => getComputedStyle(b).cursor") == "pointer"
    assert _violations(page) == []
    assert not [m for m in messages if "Content Security Policy" in m], messages


def test_swagger_ui_and_admin_run_under_the_policy(page, live_server, live_demo_study):
    """Staff: the admin and the self-hosted Swagger UI render with no CSP violation."""
    User.objects.create_user("csp-staff", password="pw-for-tests-only", is_staff=True, is_superuser=True)
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "csp-staff")
    page.fill("input[name=password]", "pw-for-tests-only")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/researcher/"))
    for path in ("/admin/", "/admin/auth/user/add/"):
        page.goto(f"{live_server.url}{path}")
        expect(page.locator("#site-name")).to_be_visible()
        assert _violations(page) == [], path
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .information-container")).to_be_visible(timeout=20_000)
    expect(page.locator(".opblock").first).to_be_visible()
    assert _violations(page) == []
