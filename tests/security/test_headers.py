"""Headers and defaults: a Content-Security-Policy everywhere, no inline code, self-hosted
Swagger UI and HSTS preload only on request."""
from __future__ import annotations

import os
import re

import pytest
from django.contrib.auth.models import Group, User
from django.template.loader import render_to_string

from ..conftest import make_staff, Walker
from ..processes import run_python

# Inline code the policy forbids: a <script> without src, a <style> element, a style="…"
# attribute, an on…="…" event handler or a javascript: URL.
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle\s*=|\son[a-z]+\s*=|javascript:", re.IGNORECASE
)


def assert_strict_csp(response) -> None:
    """The response has the project's policy: scripts and styles from this origin only."""
    policy = response.headers.get("Content-Security-Policy", "")
    directives = dict(
        (part.split(" ", 1) + [""])[:2] for part in (p.strip() for p in policy.split(";")) if part
    )
    assert directives.get("default-src") == "'self'", policy
    assert directives.get("script-src") == "'self'", policy
    assert directives.get("style-src") == "'self'", policy
    assert directives.get("object-src") == "'none'" and directives.get("frame-ancestors") == "'none'", policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def assert_no_inline_code(response) -> None:
    """The HTML page has no inline script, style or event handler."""
    html = response.content.decode()
    found = INLINE.findall(html)
    assert not found, f"inline code {found} in {response.request['PATH_INFO']}"


def test_every_participant_page_has_the_policy_and_no_inline_code(client, demo_study):
    """Entry, consent, instructions, tasks, survey and the done page: strict CSP, no inline code."""
    walker = Walker(client, demo_study.slug)
    pages = [walker.enter()]
    steps = (
        walker.consent,
        walker.instructions,
        lambda: walker.answer("The first group fishes by day, the second at night."),
        lambda: walker.answer("Group 2 describes the doctor as a woman more often."),
        lambda: walker.answer("Group 1 grows maize and beans, group 2 wheat."),
        walker.survey,
    )
    for step in steps:
        submitted = step()
        pages += [walker.last_page, submitted]
    pages.append(walker.page())
    html = "".join(r.content.decode() for r in pages if r.status_code == 200)
    for field in ('name="decision"', '<textarea', 'name="comment"'):  # consent, task, survey
        assert field in html
    assert pages[-2].status_code == 302 and pages[-2]["Location"].startswith("https://app.prolific.com/")
    for response in pages:
        assert_strict_csp(response)
        if response.status_code == 200:
            assert_no_inline_code(response)


def test_staff_annotator_and_public_pages_have_the_policy_and_no_inline_code(client, demo_study):
    """Login, admin, researcher, annotation, stimuli, API docs and error pages: strict CSP, no inline code."""
    public = [client.get("/accounts/login/"), client.get("/admin/login/"), client.get("/no-such-page/")]
    annotator = User.objects.create_user("ann", password="x")
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])
    client.force_login(annotator)
    annotation = [client.get("/annotate/")]
    client.force_login(make_staff(is_superuser=True))
    staff = [
        client.get(url)
        for url in (
            "/researcher/",
            f"/researcher/{demo_study.slug}/",
            "/admin/",
            "/admin/auth/user/",
            "/admin/auth/user/add/",
            "/stimuli/",
            "/api/docs/",
        )
    ]
    for response in public + annotation + staff:
        assert response.status_code in (200, 404), (response.request["PATH_INFO"], response.status_code)
        assert_strict_csp(response)
        assert_no_inline_code(response)


@pytest.mark.parametrize("template", ["400.html", "403.html", "404.html", "500.html", "registration/lockout.html"])
def test_error_and_lockout_templates_have_no_inline_code(template):
    """The stand-alone error pages and the lockout page link their stylesheet instead of inlining it."""
    html = render_to_string(template, {})
    assert not INLINE.findall(html) and 'rel="stylesheet"' in html


def test_swagger_ui_is_self_hosted(client, demo_study):
    """/api/docs/ loads Swagger UI and its start-up script from this server, not a CDN."""
    client.force_login(make_staff())
    page = client.get("/api/docs/")
    html = page.content.decode()
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui-bundle.js" in s for s in sources), sources
    assert all(s.startswith("/") for s in sources), sources  # same origin only
    for src in sources:
        assert client.get(src).status_code == 200, src
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content
    assert "javascript" in script["Content-Type"]


def _settings_value(name: str, **env: str) -> str:
    """``settings.<name>`` as the server would compute it with ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in {"HTTPS", "SECURE_HSTS_PRELOAD"}}
    result = run_python(
        "-c", f"import django; django.setup(); from django.conf import settings; print(settings.{name})",
        env={**base, "DJANGO_SETTINGS_MODULE": "spotlight_study.settings", **env}, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_hsts_preload_is_opt_in():
    """Behind HTTPS, HSTS is on for a year without preload, unless SECURE_HSTS_PRELOAD=true."""
    assert _settings_value("SECURE_HSTS_SECONDS", HTTPS="true") == str(60 * 60 * 24 * 365)
    assert _settings_value("SECURE_HSTS_PRELOAD", HTTPS="true") == "False"
    assert _settings_value("SECURE_HSTS_PRELOAD", HTTPS="true", SECURE_HSTS_PRELOAD="true") == "True"



@pytest.mark.parametrize("path", ["/api/studies/", "/api/studies/spotlight-replication/", "/api/no-such/",
                                  "/annotate/api/spotlight-replication/next/"])
def test_a_browser_under_the_apis_gets_json_not_the_browsable_api(client, demo_study, path):
    """Accept: text/html under /api/ and /annotate/api/ gets JSON (no page with inline styles the CSP blocks)."""
    staff = make_staff()
    staff.groups.add(Group.objects.get_or_create(name="annotators")[0])
    client.force_login(staff)
    response = client.get(path, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response["Content-Type"].startswith("application/json"), (path, response["Content-Type"])
    assert_strict_csp(response)
    response.json()
