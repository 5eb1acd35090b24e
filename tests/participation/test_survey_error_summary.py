"""The survey's error summary links to the first refused question (SurveyForm.first_error_id);
the browser side is in tests/e2e/test_keyboard_and_screen_reader_browser.py."""
from __future__ import annotations

from spotlight_study.participation.forms import SurveyForm

CONDITIONS = ["no_pattern", "pattern"]


def _form(demo_study, data=None) -> SurveyForm:
    return SurveyForm(data, survey=demo_study.survey, conditions=CONDITIONS)


def _questions(form: SurveyForm) -> list[str]:
    return [n for s in form.sections for n in s["names"]]


def test_links_to_the_first_missing_question_in_page_order(demo_study):
    """Questions 4 and 8 unanswered: the link is question 4's first option."""
    names = _questions(_form(demo_study))
    data = {"token": "t", **{n: "3" for i, n in enumerate(names) if i not in (3, 7)}}
    form = _form(demo_study, data)
    assert not form.is_valid()
    assert form.first_error_id() == f"id_{names[3]}_0"


def test_links_to_the_comment_box_when_only_it_is_refused(demo_study):
    """Every question answered, the comment over its 5,000 characters: the link is the box."""
    data = {"token": "t", "comment": "x" * 5001, **{n: "3" for n in _questions(_form(demo_study))}}
    form = _form(demo_study, data)
    assert not form.is_valid() and list(form.errors) == ["comment"]
    assert form.first_error_id() == "id_comment"


def test_no_link_for_a_fresh_or_valid_form(demo_study):
    """A fresh form and a complete one have nothing to link to."""
    assert _form(demo_study).first_error_id() is None
    data = {"token": "t", **{n: "3" for n in _questions(_form(demo_study))}}
    form = _form(demo_study, data)
    assert form.is_valid(), form.errors
    assert form.first_error_id() is None
