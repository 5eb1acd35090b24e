"""``{% memo %}`` (participation/templatetags/page_memo.py): every step page is the same with the
kept parts as rendered afresh, in every shipped language, with a form's errors, on the page that
asks again before declining, and for the next participant of another cell; a kept part sees only
the variables it names."""
from __future__ import annotations

import re

import pytest
from django.template import Context, Template

from spotlight_study.participation.templatetags import page_memo
from spotlight_study.studies.languages import SHIPPED_LANGUAGES
from spotlight_study.studies.services import study_import

from ..conftest import Walker

pytestmark = pytest.mark.django_db

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def _fresh(client, url: str, monkeypatch) -> str:
    """The page at ``url`` rendered without the memo (its CSRF token's mask aside)."""
    with monkeypatch.context() as m:
        m.setattr(page_memo, "ENABLED", False)
        return _CSRF.sub("csrf", client.get(url).content.decode())


def _same_with_and_without(walker: Walker, monkeypatch) -> str:
    kept = _CSRF.sub("csrf", walker.page().content.decode())
    assert kept == _fresh(walker.client, walker.step_url, monkeypatch)
    return kept


@pytest.mark.parametrize("language", SHIPPED_LANGUAGES)
def test_every_step_page_is_the_same_with_the_kept_parts(client, demo_data, monkeypatch, language):
    study = study_import(data={**demo_data, "language": language})
    for n in range(2):  # the second participant meets the kept parts of the first
        w = Walker(client.__class__(), study.slug)
        w.enter()
        _same_with_and_without(w, monkeypatch)
        asked = w.post({"decision": "decline"})  # the page that asks again
        assert _CSRF.sub("csrf", w.client.get(asked["Location"]).content.decode()) == _fresh(
            w.client, asked["Location"], monkeypatch)
        w.consent()
        _same_with_and_without(w, monkeypatch)
        w.instructions()
        for text in ("Day and night.", "Group 2 has women doctors.", "Maize and wheat."):
            _same_with_and_without(w, monkeypatch)
            w.post({w.answer_field(): ""})  # refused: the page shows its error
            page = _same_with_and_without(w, monkeypatch)
            assert 'aria-invalid="true"' in page
            w.post({w.answer_field(): text, "client_events": ""})
        _same_with_and_without(w, monkeypatch)
        w.post({"comment": "incomplete"})  # refused: the questions are marked
        assert "error-summary" in _same_with_and_without(w, monkeypatch)
        w.survey()


def test_a_kept_part_sees_only_the_variables_it_names():
    page = Template("{% load page_memo %}{% memo a %}[{{ a }}|{{ b }}]{% endmemo %}{{ b }}")
    assert page.render(Context({"a": 1, "b": 2})) == "[1|]2"
    assert page.render(Context({"a": 1, "b": 3})) == "[1|]3"
    assert page.render(Context({"a": 4, "b": 3})) == "[4|]3"


def test_an_object_is_kept_by_identity_and_a_new_one_renders_again():
    class Plan:
        def __init__(self, title):
            self.title = title

    page = Template("{% load page_memo %}{% memo study %}{{ study.title }}{% endmemo %}")
    first = Plan("first")
    assert page.render(Context({"study": first})) == "first"
    assert page.render(Context({"study": Plan("second")})) == "second"
    assert page.render(Context({"study": first})) == "first"


def test_a_memo_with_a_wrong_argument_is_refused():
    from django.template import TemplateSyntaxError

    with pytest.raises(TemplateSyntaxError, match="variable names"):
        Template("{% load page_memo %}{% memo 'x' %}{% endmemo %}")
