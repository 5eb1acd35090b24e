"""Draft marks (participation/draft_marks.py): a typed draft keeps the mark draft.js sends, a
refused form gets one of the server's own, and the step page renders its draft's mark on the
form (``data-draft-mark``) for draft.js's tab copy."""
from __future__ import annotations

import re

import pytest
from django.http import QueryDict

from spotlight_study.participation.draft_marks import (
    MARK_PATTERN,
    UNMARKED,
    draft_mark_of,
    page_draft_mark,
    server_draft_mark,
)
from spotlight_study.participation.errors import InvalidDraft
from spotlight_study.participation.models import Participant

from .test_drafts import TEXT, at_task_1, fresh_rate_counters, save  # noqa: F401 (an autouse fixture)

MARK = "0123456789abcdef.7"


def form_mark(response) -> str:
    """The ``data-draft-mark`` of the page's draft form."""
    m = re.search(r'<form [^>]*data-draft="[^"]+" data-draft-mark="([^"]*)"', response.content.decode())
    assert m, "the page has no draft form with a mark"
    return m.group(1)


@pytest.mark.django_db
def test_a_typed_draft_keeps_its_mark_and_the_page_renders_it(walker):
    """A draft sent with a mark stores it; the page's next GET renders it on the form."""
    p = at_task_1(walker)
    assert form_mark(walker.last_page) == ""  # no draft yet
    token = walker.token()
    assert save(walker, {"answer_1": TEXT, "draft_mark": MARK}).status_code == 204
    p.refresh_from_db()
    assert p.draft == {"token": token, "data": {"answer_1": TEXT}, "typed": True, "mark": MARK}
    assert form_mark(walker.page()) == MARK


@pytest.mark.django_db
def test_a_draft_without_a_mark_is_rendered_as_unmarked(walker):
    """A draft of an earlier draft.js (no mark) is kept, and the page marks it ``?``."""
    at_task_1(walker)
    assert save(walker, {"answer_1": TEXT}).status_code == 204
    assert form_mark(walker.page()) == UNMARKED


@pytest.mark.django_db
@pytest.mark.parametrize("mark", ["", "short.1", "0123456789abcdef", "0123456789abcdef.-1",
                                  "0123456789abcdef.1.2", "0123456789abc-ef.1", "é123456789abcdef.1",
                                  "0123456789abcdef." + "9" * 13])
def test_a_malformed_mark_is_refused_and_nothing_is_stored(walker, mark):
    """A mark not of the pattern is refused (400 invalid_draft), the kept draft unchanged."""
    p = at_task_1(walker)
    assert save(walker, {"answer_1": "kept before", "draft_mark": MARK}).status_code == 204
    r = save(walker, {"answer_1": TEXT, "draft_mark": mark})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_draft"
    p.refresh_from_db()
    assert p.draft["data"] == {"answer_1": "kept before"} and p.draft["mark"] == MARK


@pytest.mark.django_db
def test_a_repeated_mark_is_refused(walker):
    """Two marks in one draft are refused (400), nothing stored."""
    p = at_task_1(walker)
    r = save(walker, {"answer_1": TEXT, "draft_mark": [MARK, "fedcba9876543210.8"]})
    assert r.status_code == 400
    p.refresh_from_db()
    assert p.draft is None


@pytest.mark.django_db
def test_a_refused_submit_gets_a_fresh_mark_of_the_server(walker):
    """A refused form is kept with a mark no tab has seen, a new one at each refusal."""
    p = at_task_1(walker)
    save(walker, {"answer_1": TEXT, "draft_mark": MARK})
    marks = []
    for _ in range(2):
        walker.post({"answer_1": "", "client_events": ""})
        p.refresh_from_db()
        assert p.draft["data"]["answer_1"] == "" and not p.draft.get("typed")
        assert MARK_PATTERN.fullmatch(p.draft["mark"]) and p.draft["mark"] != MARK
        assert form_mark(walker.page()) == p.draft["mark"]
        marks.append(p.draft["mark"])
    assert marks[0] != marks[1]


def test_page_draft_mark_of_no_draft_another_page_and_a_bad_stored_mark():
    """No draft or another page's draft gives ``""``; a stored mark that is not valid gives ``?``."""
    assert page_draft_mark(None, "task:0:abc") == ""
    assert page_draft_mark({"token": "task:1:abc", "data": {}, "mark": MARK}, "task:0:abc") == ""
    assert page_draft_mark({"token": "task:0:abc", "data": {}, "mark": MARK}, "task:0:abc") == MARK
    assert page_draft_mark({"token": "task:0:abc", "data": {}, "mark": 7}, "task:0:abc") == UNMARKED
    assert page_draft_mark({"token": "task:0:abc", "data": {}, "mark": "x"}, "task:0:abc") == UNMARKED


def test_draft_mark_of_reads_a_query_dict_and_a_dict_of_lists():
    """The mark is read from the request's QueryDict or a dict of lists; absent gives None."""
    assert draft_mark_of(QueryDict(f"answer_1=a&draft_mark={MARK}")) == MARK
    assert draft_mark_of({"draft_mark": [MARK]}) == MARK
    assert draft_mark_of(QueryDict("answer_1=a")) is None and draft_mark_of({}) is None
    with pytest.raises(InvalidDraft):
        draft_mark_of(QueryDict(f"draft_mark={MARK}&draft_mark={MARK}"))
    assert server_draft_mark() != server_draft_mark()
    assert MARK_PATTERN.fullmatch(server_draft_mark())


@pytest.mark.django_db
def test_the_survey_form_carries_the_mark_too(walker):
    """The survey page's draft form renders its draft's mark as the task pages do."""
    at_task_1(walker)
    walker.answer("Group 2 describes the doctor as a woman more often.")
    walker.answer("Group 1 grows maize and beans, group 2 wheat and apples.")
    page = walker.page()
    assert "A few questions about the tasks" in page.content.decode()
    assert form_mark(page) == ""
    assert save(walker, {"comment": "hard to read", "draft_mark": MARK}).status_code == 204
    assert form_mark(walker.page()) == MARK
    assert Participant.objects.get(prolific_pid=walker.pid).draft["mark"] == MARK
