"""The access crawl (issue 40): every URL of the URLconf and every operation of the OpenAPI
schema, requested as each study role (member and non-member), instance staff, a user with no
role and an anonymous visitor.

The URL list is read from ``django.urls.get_resolver()`` and the API list from the schema
drf-spectacular generates, never written out here: a new page or operation fails
:func:`test_every_url_answers_as_declared` / :func:`test_every_api_operation_answers_as_declared`
until its expected access is declared in :data:`EXPECTED` or :data:`API_EXPECTED`.

What is asserted, for a study-scoped URL whose declared roles are R:

- a member of study A holding a role in R gets what the reference user gets (the superuser, or
  A's annotator for annotator pages): the page itself, or the same 404 for a made-up item;
- a member of A without a role in R gets 403 (405 where the method is refused first);
- every non-member of study B (members of A, a user with no role) gets for B exactly what they
  get for a slug that does not exist, and never a 2xx or 3xx: no page, no action, no existence
  oracle (the body is compared too, with the slug masked), for GET and for POST;
- anonymous visitors go to the login page (pages) or get 401/403 (API).
"""
from __future__ import annotations

import copy
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import URLResolver, get_resolver, reverse

from spotlight_study.accounts.roles import (
    ADJUDICATING,
    ANNOTATING,
    LAB_ADMINS,
    OWNING,
    READING,
    RUNNING,
    STUDY_ROLES,
)
from spotlight_study.studies.models import StudyMember
from spotlight_study.studies.services import study_import

# Thousands of requests: minutes on a loaded machine (the suite's default limit is 300 s).
pytestmark = [pytest.mark.own_membership, pytest.mark.django_db, pytest.mark.timeout(1500)]

PUBLIC, LOGIN, STAFF, ADMIN = "public", "login", "staff", "admin"
RUNNERS = "runners"  # instance staff, or owner/researcher of some study (the API's entry rule)

#: Who may use each URL, by ``namespace:name`` (or route for an unnamed pattern): ``PUBLIC``
#: (anyone), ``LOGIN`` (any logged-in user; the page shows only their studies), ``STAFF``
#: (instance staff only), ``RUNNERS`` or a tuple of study roles (``accounts.roles``: READING,
#: RUNNING, OWNING, ANNOTATING, ADJUDICATING). Every ``admin:`` URL is ``ADMIN`` (the admin site
#: lets in instance staff only, ``accounts/admin_site.py``).
EXPECTED: dict[str, object] = {
    "participation:entry": PUBLIC,
    "participation:step": PUBLIC,
    "participation:draft": PUBLIC,
    "": PUBLIC,
    "favicon.ico": PUBLIC,
    "study_file_schema": PUBLIC,
    "login": PUBLIC,
    "logout": PUBLIC,
    "password_reset_confirm": PUBLIC,
    "password_reset_complete": PUBLIC,
    "researcher:study_list": LOGIN,
    "researcher:team": STAFF,
    "researcher:team_remove": STAFF,
    "researcher:study_detail": READING,
    "researcher:study_team": OWNING,
    "researcher:study_team_remove": OWNING,
    "researcher:study_audit": OWNING,
    "researcher:study_audit_csv": OWNING,
    "researcher:report": READING,
    "researcher:pilot": RUNNING,
    "researcher:monitor": READING,
    "researcher:monitor_rows": READING,
    "researcher:monitor_end": RUNNING,
    "researcher:participant": READING,
    "researcher:export_zip": RUNNING,
    "researcher:study_file": OWNING,
    "researcher:preview": READING,
    "researcher:preview_page": READING,
    "annotation:home": LOGIN,
    "annotation:api_next": ANNOTATING,
    "annotation:api_item": ANNOTATING,
    "annotation:api_label": ANNOTATING,
    "annotation:queue": ANNOTATING,
    "annotation:next": ANNOTATING,
    "annotation:pilot_queue": ANNOTATING,
    "annotation:pilot_next": ANNOTATING,
    "annotation:item": ANNOTATING,
    "annotation:skip": ANNOTATING,
    "annotation:adjudication": ADJUDICATING,
    "annotation:adjudicate": ADJUDICATING,
    "annotation:overview": READING,
    "annotation:machine_accept": OWNING,
    "annotation:pilot_round": OWNING,
    "annotation:export": RUNNING,
    "stimuli:set_list": STAFF,
    "stimuli:import": STAFF,
    "stimuli:generate": STAFF,
    "stimuli:set_detail": STAFF,
    "stimuli:mining_start": STAFF,
    "stimuli:mining_detail": STAFF,
    "stimuli:setting_build": STAFF,
    "stimuli:generation_cancel": STAFF,
    "stimuli:job_resume": STAFF,
    "stimuli:job_progress": STAFF,
    "prolific:webhook": PUBLIC,
    "prolific:study_webhook": PUBLIC,
    "prolific:credentials": OWNING,
    "researcher:analysis_start": RUNNING,
    **{f"researcher:{name}": READING for name in (
        "analysis_run", "analysis_progress", "analysis_report", "analysis_file", "analysis_zip",
    )},
    "researcher:builder_new": RUNNERS,
    **{f"researcher:{name}": RUNNING for name in (
        "builder", "builder_download", "builder_new_version", "builder_pattern_check",
        "builder_preview", "builder_preview_page", "builder_publish", "builder_section",
        "builder_setting_add", "builder_setting_remove",
    )},
    "prolific:review": RUNNING,
    "prolific:sync": RUNNING,
    "prolific:demographics": RUNNING,
    "prolific:message": RUNNING,
    "prolific:approve": RUNNING,
    "prolific:failed_checks": RUNNING,
    "prolific:held": RUNNING,
    "prolific:held_decide": RUNNING,
    "prolific:bonus_draft": RUNNING,
    "prolific:bonus": RUNNING,
    "prolific:bonus_pay": RUNNING,
    "api:schema": RUNNERS,
    "api:docs": RUNNERS,
    "api:study-list": RUNNERS,
    "api:study-import-study": STAFF,
    "api:study-detail": RUNNING,
    **{f"api:{name}": RUNNING for name in (
        "settings", "cells", "dashboard", "participants", "responses", "survey_answers",
        "annotation", "agreement", "final_labels", "analysis", "prolific", "submissions",
        "prolific_sync", "prolific_approve", "prolific_failed_checks", "prolific_held",
        "prolific_held_decide", "bonuses", "bonus", "bonus_pay",
    )},
    **{f"api:{name}": STAFF for name in (
        "stimulus_sets", "stimulus_set", "outputs", "generation_jobs", "generation_job",
        "generation_cancel", "mining_jobs", "mining_job", "patterns", "job_resume",
    )},
}

#: The same for the OpenAPI schema's paths (every method of a path shares its rule).
API_EXPECTED: dict[str, object] = {
    "/api/studies/": RUNNERS,
    "/api/studies/import/": STAFF,
    "/api/stimuli/": STAFF,  # prefix: every stimulus path
}

#: Values for the path parameters other than the study's slug.
FILL = {
    "pseudonym": "p-none", "cell": 0, "page": "consent", "item_id": "none", "name": "annotations",
    "pk": 1, "kind": "generation", "submission_id": "abc", "action": "approve", "submission": "abc",
    "uidb64": "MQ", "token": "x-y", "object_id": "1", "content_type_id": 1, "id": 1,
    "app_label": "studies", "url": "x", "run_id": 1, "index": 0, "section": "texts",
}
MISSING_SLUG = "no-such-study-anywhere"


def url_patterns() -> list[tuple[str, tuple[str, ...], str]]:
    """Every pattern of the URLconf: its key (``namespace:name``, or the namespace and route of
    an unnamed one, e.g. ``admin:<path:object_id>/``), its parameter names and its full route
    (``None`` for a named pattern, which is reversed)."""
    found = []

    def walk(resolver, ns, params, route):
        for p in resolver.url_patterns:
            pattern = p.pattern
            names = tuple(pattern.converters) if hasattr(pattern, "_route") else tuple(pattern.regex.groupindex)
            if isinstance(p, URLResolver):
                sub = ns if p.namespace is None else (f"{ns}:{p.namespace}" if ns else p.namespace)
                walk(p, sub, params + names, route + str(pattern))
            else:
                if p.name:
                    found.append((f"{ns}:{p.name}" if ns else p.name, params + names, None))
                else:
                    found.append((f"{ns}:{pattern}" if ns else str(pattern), params + names, route + str(pattern)))

    walk(get_resolver(), "", (), "")
    return found


def rule_for(key: str):
    """The declared rule of a URL key, or ``None``."""
    if key in ("admin:login", "admin:logout"):
        return PUBLIC
    if key.startswith("admin:"):
        return ADMIN
    return EXPECTED.get(key)


def undeclared_message(keys) -> str | None:
    """The failure message for URL keys without a declared rule, or ``None``."""
    missing = sorted({k for k in keys if rule_for(k) is None})
    if not missing:
        return None
    return (
        f"No access expectation for {', '.join(map(repr, missing))}: declare who may use each in "
        "EXPECTED in tests/security/test_access_crawl.py (PUBLIC, LOGIN, STAFF, RUNNERS or a "
        "tuple of study roles such as READING, RUNNING, OWNING, ANNOTATING, ADJUDICATING from "
        "spotlight_study.accounts.roles), and protect the view with "
        "spotlight_study.studies.access.study_member_required(*roles)."
    )


@pytest.fixture
def world(demo_data):
    """Studies A and B (the demo study twice), a member of A for each role, instance staff (a
    superuser and a lab admin), a user with no role; one participant of A completed."""
    from tests.conftest import Walker

    study_import(data=demo_data)
    other = copy.deepcopy(demo_data)
    other["slug"] = "other-" + demo_data["slug"]
    other["title"] = "The other study"
    study_import(data=other)
    a, b = demo_data["slug"], other["slug"]
    from spotlight_study.studies.models import Study

    study_a = Study.objects.get(slug=a)
    walker = Walker(Client(), a)
    walker.complete()
    from spotlight_study.participation.selectors import participant_pseudonym

    users = {}
    for role in STUDY_ROLES:
        user = User.objects.create_user(f"m-{role}", password="pw-for-tests-only")
        StudyMember.objects.create(study=study_a, user=user, role=role)
        users[role] = user
    users["superuser"] = User.objects.create_user("root", is_staff=True, is_superuser=True)
    labadmin = User.objects.create_user("labadmin", is_staff=True)
    labadmin.groups.add(Group.objects.get_or_create(name=LAB_ADMINS)[0])
    users["labadmin"] = labadmin
    users["outsider"] = User.objects.create_user("outsider", is_staff=True)  # is_staff alone is nothing
    return {"a": a, "b": b, "users": users,
            "pseudonym": participant_pseudonym(study=study_a, prolific_pid=walker.pid)}


def _client(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _path(key, params, route, slug, world) -> str:
    if route is not None:  # unnamed: its route with every parameter "1"
        return "/" + re.sub(r"<[^>]+>|\(\?P<\w+>[^)]*\)", "1", route).replace("^", "").replace("$", "")
    values = {p: (slug if p == "slug" else world["pseudonym"] if p == "pseudonym" else FILL[p]) for p in params}
    return reverse(key, kwargs=values)


def _masked(response, slug: str) -> bytes:
    body = response.content.replace(slug.encode(), b"SLUG")
    # Per-response tokens (CSRF, CSP nonces) differ between any two responses.
    return re.sub(rb'(csrfmiddlewaretoken" value="|nonce-|nonce=")[^"\']+', rb"\1X", body)


def test_every_url_answers_as_declared(world):
    """The crawl of every URL pattern (GET, and POST for the refusals)."""
    patterns = url_patterns()
    message = undeclared_message(k for k, _, _ in patterns)
    if message:
        pytest.fail(message)
    users, a, b = world["users"], world["a"], world["b"]
    clients = {name: _client(u) for name, u in users.items()}
    anonymous = Client()
    problems, reached = [], 0
    for key, params, route in patterns:
        rule = rule_for(key)
        if rule == PUBLIC:
            continue
        is_api = key.startswith(("api:", "annotation:api_"))  # DRF: 401/403, never a login page
        if rule == ADMIN:
            # The site refuses everyone but instance staff with its login page; staff pass the
            # site (what they then may do is Django's model permissions).
            path = _path(key, params, route, a, world)
            for name, client in [*clients.items(), ("anonymous", anonymous)]:
                response = client.get(path)
                refused = response.status_code == 302 and response["Location"].startswith("/admin/login/")
                if refused == (name in ("superuser", "labadmin")) or response.status_code >= 500:
                    problems.append(f"{path} (admin): {name} got {response.status_code}")
            continue
        if "slug" not in params:
            path = _path(key, params, route, a, world)
            got = {name: c.get(path).status_code for name, c in clients.items()}
            anon = anonymous.get(path)
            if anon.status_code not in ((302, 401, 403) if is_api else (302,)):
                problems.append(f"{path}: anonymous got {anon.status_code}")
            if any(code >= 500 for code in got.values()):
                problems.append(f"{path}: {got}")
            if rule == STAFF:
                for name, code in got.items():
                    staff = name in ("superuser", "labadmin")
                    refused = code in (403, 405)
                    if staff == refused and not (staff and code == 405):
                        problems.append(f"{path} ({rule}): {name} got {code}")
            elif rule == RUNNERS:
                for name, code in got.items():
                    runner = name in ("superuser", "labadmin", "owner", "researcher")
                    if runner != (code not in (403, 405)):
                        problems.append(f"{path} (runners): {name} got {code}")
            continue
        roles = rule
        reference = users["annotator"] if roles == ANNOTATING else users["superuser"]
        ref_client = clients["annotator" if roles == ANNOTATING else "superuser"]
        path_a = _path(key, params, route, a, world)
        path_b = _path(key, params, route, b, world)
        path_none = _path(key, params, route, MISSING_SLUG, world)
        ref = ref_client.get(path_a).status_code
        if ref in (403, 404) and ref != 404 or ref >= 500:
            problems.append(f"{path_a}: the reference user {reference} got {ref}")
        anon = anonymous.get(path_a)
        if anon.status_code not in ((401, 403, 405) if is_api else (302, 405)):
            problems.append(f"{path_a}: anonymous got {anon.status_code}")
        for name, client in clients.items():
            code = client.get(path_a).status_code
            staff = name in ("superuser", "labadmin")
            allowed = (staff and roles != ANNOTATING) or name in roles
            if allowed:
                if code != ref:
                    problems.append(f"{path_a} {roles}: {name} got {code}, the reference {ref}")
                elif code == 200:
                    reached += 1
            else:
                member = name in STUDY_ROLES or staff
                wanted = (403, 405) if member or (is_api and name == "outsider") else (404, 405)
                if code not in wanted:
                    problems.append(f"{path_a} {roles}: {name} (not allowed) got {code}")
                if not member and client.get(path_none).status_code != code:
                    problems.append(f"{path_a}: {name} can tell the study exists")
                post = client.post(path_a).status_code
                if post not in (403, 404, 405):
                    problems.append(f"POST {path_a} {roles}: {name} (not allowed) got {post}")
            if staff:
                continue
            # Study B: nobody here is a member of it; it must look like no study at all.
            for method in ("get", "post"):
                seen = getattr(client, method)(path_b)
                ghost = getattr(client, method)(path_none)
                if seen.status_code != ghost.status_code or seen.status_code < 400:
                    problems.append(
                        f"{method.upper()} {path_b}: {name} (non-member) got {seen.status_code}, "
                        f"an unknown slug {ghost.status_code}"
                    )
                elif method == "get" and _masked(seen, b) != _masked(ghost, MISSING_SLUG):
                    problems.append(f"GET {path_b}: {name} sees a different body than for an unknown slug")
    print(f"access crawl: {len(patterns)} URL patterns, {reached} member requests answered 200")
    assert not problems, "\n".join(problems)
    assert reached > 40  # the members did reach their pages: the crawl is not all refusals


def test_an_undeclared_url_fails_the_crawl_with_how_to_declare_it():
    """A URL name with no rule makes the crawl fail, saying where and how to declare it."""
    message = undeclared_message(["researcher:study_detail", "researcher:brand_new_page"])
    assert message is not None and "'researcher:brand_new_page'" in message
    assert "EXPECTED in tests/security/test_access_crawl.py" in message
    assert "study_detail" not in message
    assert undeclared_message([k for k, _, _ in url_patterns()]) is None


def api_operations() -> list[tuple[str, str]]:
    """Every (path template, method) of the researcher API's OpenAPI schema."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [(path, method) for path, ops in schema["paths"].items() for method in ops
            if method in ("get", "post", "put", "patch", "delete")]


def api_rule(path: str):
    """The declared rule of an API path: study-scoped paths run on RUNNING, else the table."""
    if "{slug}" in path:
        return RUNNING
    if path in API_EXPECTED:
        return API_EXPECTED[path]
    return next((rule for prefix, rule in API_EXPECTED.items() if prefix.endswith("/") and
                 prefix != "/api/studies/" and path.startswith(prefix)), None)


def _call(client, method: str, path: str):
    """One request: GET plain, any other method with an empty JSON object."""
    if method == "get":
        return client.get(path)
    return getattr(client, method)(path, data="{}", content_type="application/json")


def test_every_api_operation_answers_as_declared(world):
    """Every operation of the OpenAPI schema, as each role (GET as members; every method as
    non-members, who must get what an unknown slug gets)."""
    operations = api_operations()
    missing = sorted({p for p, _ in operations if api_rule(p) is None})
    assert not missing, (
        f"No access expectation for API paths {missing}: declare them in API_EXPECTED in "
        "tests/security/test_access_crawl.py (study paths with {slug} are RUNNING)."
    )
    users, a, b = world["users"], world["a"], world["b"]
    clients = {name: _client(u) for name, u in users.items()}
    problems, reached = [], 0

    def fill(path, slug):
        return re.sub(r"\{(\w+)\}", lambda m: slug if m.group(1) == "slug" else str(FILL.get(m.group(1), 1)), path)

    for template, method in operations:
        rule = api_rule(template)
        path_a, path_b, path_none = (fill(template, s) for s in (a, b, MISSING_SLUG))
        anon = _call(Client(), method, path_a)
        if anon.status_code not in (401, 403):
            problems.append(f"{method.upper()} {path_a}: anonymous got {anon.status_code}")
        ref = clients["superuser"].get(path_a).status_code if method == "get" else None
        for name, client in clients.items():
            staff = name in ("superuser", "labadmin")
            runner = staff or name in RUNNING
            if rule == STAFF:
                allowed = staff
            else:
                allowed = staff or (name in RUNNING)
            if method == "get":
                code = client.get(path_a).status_code
                if allowed and code != ref:
                    problems.append(f"GET {path_a}: {name} got {code}, staff {ref}")
                elif allowed and code == 200 and not staff:
                    reached += 1
                elif not allowed and code != 403:
                    problems.append(f"GET {path_a}: {name} (not allowed) got {code}")
            elif not allowed:
                code = _call(client, method, path_a).status_code
                if code != 403:
                    problems.append(f"{method.upper()} {path_a}: {name} (not allowed) got {code}")
            if staff or "{slug}" not in template:
                continue
            seen, ghost = _call(client, method, path_b), _call(client, method, path_none)
            wanted = 404 if runner else 403
            if seen.status_code != ghost.status_code or seen.status_code != wanted:
                problems.append(
                    f"{method.upper()} {path_b}: {name} got {seen.status_code}, an unknown slug "
                    f"{ghost.status_code}, wanted {wanted}"
                )
            elif seen.content.replace(b.encode(), b"S") != ghost.content.replace(MISSING_SLUG.encode(), b"S"):
                problems.append(f"{method.upper()} {path_b}: {name} sees another body than for an unknown slug")
    print(f"API crawl: {len(operations)} operations, {reached} non-staff member GETs answered 200")
    assert not problems, "\n".join(problems)
    assert reached >= 10


def test_api_study_list_shows_only_the_members_studies(world):
    """The API's study list is filtered: a researcher of A sees A, staff see both."""
    users, a, b = world["users"], world["a"], world["b"]
    listed = _client(users["researcher"]).get("/api/studies/").json()["results"]
    assert [s["slug"] for s in listed] == [a]
    everything = {s["slug"] for s in _client(users["labadmin"]).get("/api/studies/").json()["results"]}
    assert everything == {a, b}
