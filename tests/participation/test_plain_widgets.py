"""The participant pages write their form controls as plain HTML (docs/performance.md): that
markup must stay the HTML Django's widgets would render, fresh and with a refused draft."""
from __future__ import annotations

import re

from django.test.html import parse_html

from spotlight_study.participation.forms import AnswerForm, ConsentForm, SurveyForm
from spotlight_study.participation.models import Participant


def _assert_rendered(page_html: str, bound_field, *, widget: bool = True) -> None:
    """The widget's (and its errors') HTML occurs in the page, compared as parsed HTML: the same
    elements, attributes and text, whitespace and the spelling of escapes aside."""
    page = parse_html(page_html)
    if widget:
        assert parse_html(str(bound_field)) in page, str(bound_field)
    if bound_field.errors:
        assert parse_html(str(bound_field.errors)) in page, str(bound_field.errors)


def test_consent_and_task_controls_match_the_widgets(walker, demo_study):
    """The token, the telemetry field and the answer box (with its errors) are the widgets' HTML."""
    walker.enter()
    consent = walker.page().content.decode()
    token = walker.token()
    _assert_rendered(consent, ConsentForm(initial={"token": token})["token"])
    walker.post({})  # no button pressed: refused, shown again with its error
    refused = ConsentForm({"token": token})
    refused.is_valid()
    # The decision is the two buttons; only its error is a widget's markup.
    assert refused["decision"].errors
    _assert_rendered(walker.page().content.decode(), refused["decision"], widget=False)
    walker.consent()
    walker.instructions()
    fresh = walker.page().content.decode()
    form = AnswerForm(initial={"token": walker.token()}, position=0, max_chars=demo_study.max_answer_chars)
    for name in ("token", "client_events", "answer_0"):
        _assert_rendered(fresh, form[name])
    draft = {"answer_0": "<b>night</b>\r\n" + "x" * 5000, "client_events": '{"paste_count": 1}'}
    walker.post(draft)
    page = walker.page().content.decode()
    form = AnswerForm({**draft, "token": walker.token()}, position=0, max_chars=demo_study.max_answer_chars)
    assert not form.is_valid()
    for name in ("token", "client_events", "answer_0"):
        _assert_rendered(page, form[name])


# What the survey adds to RadioSelect's markup: the question's text and error tied to its group.
_RADIOGROUP_ARIA = re.compile(r' role="radiogroup" aria-labelledby="(id_[\w-]+)_label"( aria-describedby="\1_error")?')


def _radio_groups(page_html: str) -> dict[str, bool]:
    """``{question id: has aria-describedby}`` of every radio group, after checking each group's
    label element exists."""
    groups = {}
    for m in _RADIOGROUP_ARIA.finditer(page_html):
        assert f'<p id="{m.group(1)}_label">' in page_html, m.group(1)
        groups[m.group(1)] = bool(m.group(2))
    return groups


def test_survey_radios_match_the_radio_select_widget(walker, demo_study):
    """Every survey question renders as RadioSelect would (plus its ARIA radio group), fresh and
    after an incomplete post."""
    walker.enter()
    walker.consent()
    walker.instructions()
    for text in ("night", "gender", "crops"):
        walker.answer(text)
    page = walker.page().content.decode()
    p = Participant.objects.get()
    conditions = list(dict.fromkeys(t["condition"] for t in p.cell_plan))
    fresh = SurveyForm(initial={"token": walker.token()}, survey=demo_study.survey, conditions=conditions)
    names = [n for n in fresh.fields if n != "token"]
    assert len(names) == 11
    radios = [n for n in names if n != "comment"]
    assert _radio_groups(page) == {f"id_{n}": False for n in radios}
    page = _RADIOGROUP_ARIA.sub("", page)
    for name in names:
        _assert_rendered(page, fresh[name])
    posted = {"c__pattern__ease": "5", "comment": "a <comment>"}
    walker.post(posted)
    page = walker.page().content.decode()
    bound = SurveyForm({**posted, "token": walker.token()}, survey=demo_study.survey, conditions=conditions)
    assert not bound.is_valid()
    # Every question but the one answered is missing: its group points at its error message.
    assert _radio_groups(page) == {f"id_{n}": n != "c__pattern__ease" for n in radios}
    page = _RADIOGROUP_ARIA.sub("", page)
    for name in names:
        _assert_rendered(page, bound[name])


def test_survey_forms_share_their_question_fields_but_not_their_data(demo_study):
    """Two survey forms of one plan share the question fields (built once), each has its own
    comment field, and each validates its own data; another order of conditions has its own."""
    from spotlight_study.studies.plan import study_plan_of

    survey = study_plan_of(demo_study).survey
    first = SurveyForm({"token": "t"}, survey=survey, conditions=["pattern", "no_pattern"])
    names = [n for n in first.fields if n.startswith(("c__", "b__"))]
    second = SurveyForm({"token": "t", **{n: "2" for n in names}}, survey=survey,
                        conditions=["pattern", "no_pattern"])
    assert names and all(first.fields[n] is second.fields[n] for n in names)
    assert first.fields["comment"] is not second.fields["comment"]
    assert list(second.fields)[-1] == "comment"
    assert not first.is_valid() and set(first.errors) == set(names)
    assert second.is_valid() and set(second.responses().values()) == {2}
    reversed_order = SurveyForm(initial={"token": "t"}, survey=survey, conditions=["no_pattern", "pattern"])
    assert reversed_order.sections[0]["names"][0].startswith("c__no_pattern__")
    assert first.sections[0]["names"][0].startswith("c__pattern__")


def test_step_forms_keep_their_own_fields_and_data(demo_study):
    """Forms of one class get their own copies of the declared fields (Django's deep copy) and
    keep their own data, errors and field dict; the survey's comment label is each survey's own."""
    from spotlight_study.participation.forms import EntryForm, StepForm
    from spotlight_study.studies.plan import study_plan_of

    for form_class in (EntryForm, StepForm, ConsentForm):
        first, second = form_class({}), form_class({})
        assert first.fields is not second.fields
        assert all(first.fields[n] is not second.fields[n] for n in form_class.base_fields)
    refused, accepted = ConsentForm({"token": "t"}), ConsentForm({"token": "t", "decision": "agree"})
    assert not refused.is_valid() and accepted.is_valid()
    assert "decision" in refused.errors and not accepted.errors
    first = AnswerForm({"token": "t", "answer_1": "night"}, position=1)
    second = AnswerForm({"token": "t", "answer_2": ""}, position=2)
    assert first.fields["token"] is not second.fields["token"]
    assert first.is_valid() and not second.is_valid()
    assert "answer_2" not in first.fields and "answer_1" not in second.fields
    # A refused answer's box gets autofocus on its own widget, never on another form's.
    assert second.fields["answer_2"].widget.attrs.get("autofocus")
    assert not first.fields["answer_1"].widget.attrs.get("autofocus")

    survey = study_plan_of(demo_study).survey
    other = {**survey, "comment_prompt": "Anything else?"}
    one = SurveyForm(survey=survey, conditions=["pattern", "no_pattern"])
    two = SurveyForm(survey=other, conditions=["pattern", "no_pattern"])
    assert one["comment"].label == survey["comment_prompt"] and two["comment"].label == "Anything else?"
    assert SurveyForm.base_fields["comment"].label is None
