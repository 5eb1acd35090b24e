"""Typed drafts (POST /s/<slug>/draft/): kept while typing, shown by the step's next GET, bound to
the participant and the page exactly as the step's form, and never an answer."""
from __future__ import annotations

import html as html_lib
import re

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from spotlight_study.participation.drafts import typed_draft_save
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.studies.plan import study_plan_for_slug

from ..conftest import Walker

TEXT = "Group 2 mentions the doctor's family more often"


@pytest.fixture(autouse=True)
def fresh_rate_counters(settings):
    """The draft limit's counters start empty (SQLite reuses participant ids between tests)."""
    settings.DRAFT_RATE_LIMIT = "120/m"
    cache.clear()
    yield
    cache.clear()


def draft_url(w: Walker) -> str:
    """Where draft.js sends the drafts of the walker's study."""
    return f"/s/{w.slug}/draft/"


def save(w: Walker, data: dict, token: str | None = None, **extra):
    """POST a typed draft as draft.js does (the page's token unless ``token`` is given)."""
    return w.client.post(draft_url(w), {"token": token if token is not None else w.token(), **data}, **extra)


def at_task_1(w: Walker) -> Participant:
    """Walk a new participant to main task 1 (its page is the walker's last); the participant."""
    w.enter()
    w.consent()
    w.instructions()
    w.answer("The first group fishes by day, the second at night.")
    w.page()
    assert w.answer_field() == "answer_1"
    return Participant.objects.get(prolific_pid=w.pid)


def box_text(response, name: str) -> str:
    """The text a page shows in its text box ``name`` (unescaped)."""
    html = response.content.decode()
    m = re.search(rf'<textarea name="{name}"[^>]*>\n(.*?)</textarea>', html, re.DOTALL)
    assert m, f"no textarea {name}"
    return html_lib.unescape(m.group(1))


@pytest.mark.django_db
def test_a_typed_draft_is_kept_and_shown_without_errors_on_the_next_get(walker):
    """A draft of the current task is stored (204) and the page's next GET shows it, no error."""
    p = at_task_1(walker)
    token = walker.token()
    r = save(walker, {"answer_1": TEXT})
    assert r.status_code == 204 and r.content == b""
    assert r["Cache-Control"].startswith("max-age=0, no-cache, no-store")
    p.refresh_from_db()
    assert p.draft == {"token": token, "data": {"answer_1": TEXT}, "typed": True}
    page = walker.page()
    assert box_text(page, "answer_1") == TEXT
    assert "errorlist" not in page.content.decode()
    assert 'data-draft="/s/' in page.content.decode() and "js/draft.js" in page.content.decode()
    # A half-typed answer, even an empty one, is no error either.
    save(walker, {"answer_1": ""})
    page = walker.page()
    assert box_text(page, "answer_1") == "" and "errorlist" not in page.content.decode()


@pytest.mark.django_db
def test_a_draft_is_one_update_and_never_an_answer(walker, django_assert_num_queries):
    """A save runs one statement; the task's response stays unanswered and the step unchanged."""
    p = at_task_1(walker)
    token = walker.token()
    # The first draft reads the study's plan (its limits); the next ones within 5 s do not.
    assert save(walker, {"answer_1": "warm"}).status_code == 204
    with django_assert_num_queries(1):
        assert save(walker, {"answer_1": TEXT}).status_code == 204
    response = TaskResponse.objects.get(participant=p, position=1)
    assert response.answered_at is None and response.answer == ""
    p.refresh_from_db()
    assert (p.step, p.task_index) == ("task", 0)
    assert walker.token(walker.page()) == token


@pytest.mark.django_db
def test_the_later_of_two_tabs_wins_and_a_stale_draft_changes_no_saved_answer(walker):
    """Two tabs of task 1: the later draft wins; after the submit their drafts are stale (409)."""
    p = at_task_1(walker)
    token_1 = walker.token()
    assert save(walker, {"answer_1": "first tab"}).status_code == 204
    assert save(walker, {"answer_1": "second tab, later"}).status_code == 204
    assert box_text(walker.page(), "answer_1") == "second tab, later"

    walker.post({"answer_1": "The submitted answer of task 1.", "client_events": ""})
    walker.page()
    assert walker.answer_field() == "answer_2"
    token_2 = walker.token()
    assert save(walker, {"answer_2": "typed on task 2"}).status_code == 204

    stale = save(walker, {"answer_1": "the old tab keeps typing"}, token=token_1)
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "stale_step"
    p.refresh_from_db()
    assert p.draft == {"token": token_2, "data": {"answer_2": "typed on task 2"}, "typed": True}
    assert TaskResponse.objects.get(participant=p, position=1).answer == "The submitted answer of task 1."
    # The old page's token with the current step's field is not that page's: refused.
    assert save(walker, {"answer_2": "forged"}, token=token_1).status_code == 400
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_2": "typed on task 2"}


@pytest.mark.django_db
def test_a_submit_clears_the_draft(walker):
    """The step change that saves the answer drops the draft in its own UPDATE."""
    p = at_task_1(walker)
    save(walker, {"answer_1": TEXT})
    walker.post({"answer_1": TEXT + ".", "client_events": ""})
    p.refresh_from_db()
    assert p.draft is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data, code",
    [
        ({"answer_2": TEXT}, "invalid_draft"),  # another step's box
        ({"answer_0": TEXT}, "invalid_draft"),
        ({"answer_1": TEXT, "comment": "x"}, "invalid_draft"),
        ({"answer_1": TEXT, "client_events": "{}"}, "invalid_draft"),
        ({"answer_1": [TEXT, "again"]}, "invalid_draft"),  # a field repeated
        ({"answer_1": "x" * 5001}, "invalid_draft"),  # over max_answer_chars (5,000)
    ],
)
def test_fields_this_page_does_not_have_are_refused_and_change_nothing(walker, data, code):
    """A field of another page, a repeated field or an over-long answer: 400, nothing stored."""
    p = at_task_1(walker)
    save(walker, {"answer_1": "kept before"})
    r = save(walker, data)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == code and "nothing was saved" in r.json()["error"]["message"]
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_1": "kept before"}


@pytest.mark.django_db
def test_line_breaks_count_once_so_a_full_box_is_kept(walker):
    """5,000 characters with CRLF line breaks (as a browser may send them) are within the limit."""
    p = at_task_1(walker)
    text = ("a" * 98 + "\r\n") * 50
    assert save(walker, {"answer_1": text}).status_code == 204
    p.refresh_from_db()
    assert p.draft["data"]["answer_1"] == text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "token, status, code",
    [
        ("", 400, "invalid_draft"),
        ("task:0", 400, "invalid_draft"),
        ("task:x:0123456789", 400, "invalid_draft"),
        ("task:\u00b2:{tag}", 400, "invalid_draft"),  # a digit to str.isdigit, not to int()
        ("task:\u0663:{tag}", 400, "invalid_draft"),
        ("task:1234567:{tag}", 400, "invalid_draft"),
        ("task:0:0123456789", 403, "foreign_draft"),  # well-formed, another participant's tag
        ("consent:0:{tag}", 400, "invalid_draft"),  # nothing to type there
        ("done:0:{tag}", 400, "invalid_draft"),
    ],
)
def test_forged_or_malformed_tokens_are_refused(walker, token, status, code):
    """A token that is not a page of this participant with something to type: 4xx, nothing kept."""
    p = at_task_1(walker)
    tag = walker.token().split(":")[2]
    r = save(walker, {"answer_1": TEXT}, token=token.format(tag=tag))
    assert r.status_code == status and r.json()["error"]["code"] == code
    p.refresh_from_db()
    assert p.draft is None


@pytest.mark.django_db
def test_a_draft_needs_the_csrf_token(demo_study):
    """Without the page's CSRF token the draft is refused (403) and nothing is stored."""
    w = Walker(Client(enforce_csrf_checks=True), demo_study.slug)
    w.enter()

    def csrf() -> str:
        html = w.last_page.content.decode()
        return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)

    w.page()
    w.post({"decision": "agree", "csrfmiddlewaretoken": csrf()})
    w.page()
    w.post({"csrfmiddlewaretoken": csrf()})
    w.page()
    p = Participant.objects.get(prolific_pid=w.pid)
    assert p.step == "training"
    assert save(w, {"answer_0": TEXT}).status_code == 403
    p.refresh_from_db()
    assert p.draft is None
    assert save(w, {"answer_0": TEXT, "csrfmiddlewaretoken": csrf()}).status_code == 204
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_0": TEXT}


@pytest.mark.django_db
def test_no_binding_or_a_wrong_method_is_refused(client, demo_study, walker):
    """Without the participant cookie: 403; a GET: 405; an unknown study: 403 (no cookie for it)."""
    r = client.post(f"/s/{demo_study.slug}/draft/", {"token": "task:0:0123456789", "answer_1": TEXT})
    assert r.status_code == 403 and r.json()["error"]["code"] == "no_session"
    at_task_1(walker)
    assert walker.client.get(draft_url(walker)).status_code == 405
    assert walker.client.post("/s/no-such-study/draft/", {"token": walker.token()}).status_code == 403
    assert Participant.objects.get(prolific_pid=walker.pid).draft is None


@pytest.mark.django_db
def test_a_body_over_the_size_limit_or_not_utf8_is_refused(walker, settings):
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413; bytes that are not UTF-8: 400; nothing kept."""
    p = at_task_1(walker)
    token = walker.token()
    big = f"token={token}&answer_1=" + "a" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)
    r = walker.client.post(draft_url(walker), big, content_type="application/x-www-form-urlencoded")
    assert r.status_code == 413
    bad = f"token={token}&answer_1=caf%E9".encode()
    r = walker.client.post(draft_url(walker), bad, content_type="application/x-www-form-urlencoded")
    assert r.status_code == 400
    r = walker.client.post(draft_url(walker), b"token=" + token.encode() + b"&answer_1=\xff\xfe",
                           content_type="application/x-www-form-urlencoded")
    assert r.status_code == 400
    r = walker.client.post(draft_url(walker), f"token={token}&answer_1=x".encode(),
                           content_type="application/x-www-form-urlencoded; charset=latin-1")
    assert r.status_code == 400
    p.refresh_from_db()
    assert p.draft is None


@pytest.mark.django_db
def test_nul_and_other_unicode_round_trip(walker):
    """Text with NUL (jsonb cannot store it), emoji and line breaks comes back as typed."""
    at_task_1(walker)
    text = "caf\u00e9 \U0001F600\nline two\x00 end"
    assert save(walker, {"answer_1": text}).status_code == 204
    assert box_text(walker.page(), "answer_1") == text


@pytest.mark.django_db
def test_over_the_draft_rate_limit_a_save_gets_429_and_nothing_is_stored(walker, settings):
    """DRAFT_RATE_LIMIT per participant: the save over it is refused with Retry-After."""
    settings.DRAFT_RATE_LIMIT = "3/m"
    p = at_task_1(walker)
    for i in range(3):
        assert save(walker, {"answer_1": f"save {i}"}).status_code == 204
    r = save(walker, {"answer_1": "one too many"})
    assert r.status_code == 429 and int(r["Retry-After"]) >= 1
    assert r.json()["error"]["code"] == "rate_limited"
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_1": "save 2"}
    # Another participant has a counter of their own.
    other = Walker(Client(), walker.slug)
    at_task_1(other)
    assert save(other, {"answer_1": "mine"}).status_code == 204


@pytest.mark.django_db
def test_survey_choices_and_comment_are_kept_and_shown(walker):
    """The survey's draft: chosen radios come back checked and the comment typed, no errors."""
    at_task_1(walker)
    walker.answer("Group 2 describes the doctor as a woman more often.")
    walker.answer("Group 1 grows maize and beans, group 2 wheat.")
    page = walker.page()
    names = sorted(set(re.findall(r'name="([cb]__[^"]+)"', page.content.decode())))
    assert len(names) == 10
    chosen = {names[0]: "2", names[-1]: "5"}
    assert save(walker, {**chosen, "comment": "Half a comment"}).status_code == 204
    html = walker.page().content.decode()
    assert re.search(rf'name="{names[0]}" value="2"[^>]*checked', html)
    assert re.search(rf'name="{names[-1]}" value="5"[^>]*checked', html)
    assert len(re.findall(r"\schecked", html)) == 2
    assert box_text(walker.last_page, "comment") == "Half a comment"
    assert "errorlist" not in html and "Please check the questions" not in html
    # A value off the scale, a question the study does not have, an over-long comment: 400.
    for bad in ({names[0]: "6"}, {"c__nowhere__x": "1"}, {"comment": "c" * 5001}):
        assert save(walker, bad).status_code == 400, bad
    assert SurveyAnswer.objects.count() == 0
    # The submit ignores the draft: it saves what the form posts.
    walker.post({**{n: "4" for n in names}, "comment": "final"})
    p = Participant.objects.get(prolific_pid=walker.pid)
    assert p.status == "completed" and p.comment == "final" and p.draft is None
    assert set(SurveyAnswer.objects.filter(participant=p).values_list("response", flat=True)) == {4}
    assert save(walker, {names[0]: "1"}).status_code == 409


@pytest.mark.django_db
def test_the_export_does_not_count_a_draft(walker, tmp_path):
    """A participant with a typed draft has no answer in the export, and the draft's text is in
    no exported file."""
    p = at_task_1(walker)
    save(walker, {"answer_1": "DRAFT-ONLY-TEXT"})
    call_command("export_results", walker.slug, "--out", str(tmp_path))
    files = list(tmp_path.iterdir())
    assert files
    assert not any("DRAFT-ONLY-TEXT" in f.read_text() for f in files if f.is_file())
    assert TaskResponse.objects.filter(participant=p, answered_at__isnull=False).count() == 1


@pytest.mark.django_db
def test_the_service_refuses_a_draft_of_an_ended_participant(walker):
    """typed_draft_save returns False (nothing kept) once the participant is not in progress."""
    p = at_task_1(walker)
    token = walker.token()
    plan = study_plan_for_slug(walker.slug)
    assert typed_draft_save(plan=plan, participant_id=p.pk, token=token, fields={"answer_1": ["a"]})
    Participant.objects.filter(pk=p.pk).update(status=Participant.Status.RETURNED, draft=None)
    assert not typed_draft_save(plan=plan, participant_id=p.pk, token=token, fields={"answer_1": ["b"]})
    p.refresh_from_db()
    assert p.draft is None


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_async_commit_ends_with_the_draft_statement(demo_study):
    """A draft commits without waiting for the WAL; the connection's later statements are
    synchronous again (the setting is the draft statement's own transaction's)."""
    from django.db import connection

    w = Walker(Client(), demo_study.slug)
    p = at_task_1(w)
    assert save(w, {"answer_1": TEXT}).status_code == 204
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_1": TEXT}
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
