"""Forms of the participant flow. They validate input; services change state.

Their messages are the platform's words on participant pages, so they are translated
(``gettext_lazy``: rendered in the study's language, spotlight_study/participation/language.py);
counts in them are written as the language writes numbers (``number_format``).
"""
from __future__ import annotations

import json

from django import forms
from django.core.validators import RegexValidator
from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_lazy

from spotlight_study.identifiers import PROLIFIC_ID_RE

from . import survey_items
from .services import Telemetry

_hex24 = RegexValidator(
    PROLIFIC_ID_RE,
    # Translators: follows the name of a link parameter, e.g. "PROLIFIC_PID must be ...".
    message=gettext_lazy("must be 24 characters long and use only 0-9 and a-f."),
)
# Translators: follows the name of a link parameter, e.g. "PROLIFIC_PID is missing.".
_MISSING = {"required": gettext_lazy("is missing.")}

# Upper bounds for browser telemetry, so that a forged value cannot distort summaries.
_MAX_EVENTS = 200
_MAX_COUNT = 100_000
_MAX_HIDDEN_MS = 24 * 60 * 60 * 1000
#: The writing-process counts of :class:`.services.Telemetry` and their upper bounds. An answer
#: has at most 5,000 characters, but typed ones include those deleted again.
_WRITING_CAPS = {
    "typed_chars": _MAX_COUNT * 10,
    "dropped_chars": _MAX_COUNT * 10,
    "replaced_chars": _MAX_COUNT * 10,
    "insertions": _MAX_COUNT * 10,
    "deletions": _MAX_COUNT * 10,
    "typing_ms": _MAX_HIDDEN_MS,
    "largest_insert_chars": _MAX_COUNT * 10,
    "away_before_paste_ms": _MAX_HIDDEN_MS,
}


class EntryForm(forms.Form):
    """Prolific's URL parameters: each 24 lowercase hex characters, each given once.

    Bound to ``request.GET``. A parameter repeated with different values (``?PROLIFIC_PID=a&
    PROLIFIC_PID=b``) is refused rather than silently read as its last value; the same value
    repeated is accepted.
    """

    PROLIFIC_PID = forms.CharField(validators=[_hex24], error_messages=_MISSING)
    STUDY_ID = forms.CharField(validators=[_hex24], error_messages=_MISSING)
    SESSION_ID = forms.CharField(validators=[_hex24], error_messages=_MISSING)

    def clean(self) -> dict:
        cleaned = super().clean()
        getlist = getattr(self.data, "getlist", None)
        if getlist is None:
            return cleaned
        for name in self.fields:
            if len({value.strip() for value in getlist(name)}) > 1:
                # The conflict is the one problem worth naming for this parameter.
                self._errors.pop(name, None)
                cleaned.pop(name, None)
                # Translators: follows the name of a link parameter, e.g. "STUDY_ID is given ...".
                self.add_error(name, gettext("is given more than once, with different values."))
        return cleaned

    def problems(self) -> list[str]:
        """Readable problems, e.g. ``["PROLIFIC_PID is missing."]`` (call after ``is_valid``)."""
        return [f"{name} {' '.join(errs)}" for name, errs in self.errors.items()]


class StepForm(forms.Form):
    """Base form: carries the token of the page it was rendered for."""

    token = forms.CharField(widget=forms.HiddenInput, max_length=40)


class ConsentForm(StepForm):
    """Consent decision: the button pressed, ``agree``, ``decline`` (asks to confirm) or
    ``decline_confirmed`` (the confirmation's button, which ends the session)."""

    decision = forms.ChoiceField(
        choices=[("agree", "agree"), ("decline", "decline"), ("decline_confirmed", "decline_confirmed")],
        error_messages={"required": gettext_lazy("Please choose one of the two buttons below.")},
    )


def _refuse_constant(name: str):
    """``json.loads`` hook: NaN and Infinity are not JSON, and neither database stores them."""
    raise ValueError(f"{name} is not allowed")


def _storable(value):
    """A telemetry value as both databases store it, or ``None`` to drop it.

    Text loses NUL (PostgreSQL's jsonb refuses ``\\u0000``) and lone surrogates (not UTF-8) and
    is cut to 100 characters; numbers must lie within +-2**53 (exact in JavaScript); anything
    else is dropped.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value if abs(value) <= 2**53 else None
    if isinstance(value, str):
        return "".join(ch for ch in value if ch != "\x00" and not "\ud800" <= ch <= "\udfff")[:100]
    return None


#: The longest ``client_events`` value that is parsed (characters): flow.js writes about 10 KB
#: (at most 200 events). A longer one is dropped whole, and the answer is saved without it.
MAX_TELEMETRY_CHARS = 64 * 1024


def parse_telemetry(raw: str) -> Telemetry:
    """Parse the JSON that ``static/js/flow.js`` puts in the hidden ``client_events`` field.

    Shape: ``{"paste_count": int, "paste_chars": int, "hidden_ms": int, "blur_count": int,
    "typed_chars": int, "dropped_chars": int, "replaced_chars": int, "insertions": int,
    "deletions": int, "typing_ms": int, "largest_insert_chars": int,
    "away_before_paste_ms": int, "events": [{"t": ms since page load, "type": str, ...}]}``.
    Telemetry is evidence only, so a missing or malformed value gives zeros instead of an error
    the participant would see: a negative number is 0, one over its bound is the bound, NaN,
    Infinity, text or a boolean is 0, unknown fields and events past the 200th are dropped, and
    a value longer than :data:`MAX_TELEMETRY_CHARS` gives zeros unparsed.
    """
    if len(raw) > MAX_TELEMETRY_CHARS:
        # Far more than flow.js ever sends: forged or broken, and not worth parsing.
        return Telemetry()
    try:
        data = json.loads(raw, parse_constant=_refuse_constant) if raw else {}
    except (ValueError, TypeError, RecursionError):
        return Telemetry()
    if not isinstance(data, dict):
        return Telemetry()

    def count(name: str, cap: int) -> int:
        value = data.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return 0
        return int(min(max(value, 0), cap))

    events = data.get("events", [])
    if not isinstance(events, list):
        events = []
    clean_events = [
        {
            k: _storable(v)
            for k, v in e.items()
            if k in {"t", "type", "chars"} and _storable(v) is not None
        }
        for e in events[:_MAX_EVENTS]
        if isinstance(e, dict)
    ]
    return Telemetry(
        paste_count=count("paste_count", _MAX_COUNT),
        paste_chars=count("paste_chars", _MAX_COUNT * 10),
        hidden_ms=count("hidden_ms", _MAX_HIDDEN_MS),
        blur_count=count("blur_count", _MAX_COUNT),
        events=clean_events,
        **{name: count(name, cap) for name, cap in _WRITING_CAPS.items()},
    )


EMPTY_ANSWER = gettext_lazy("Please describe the differences you see before continuing.")


def _number(n: int) -> str:
    """``n`` as the active language writes a count: ``5,000`` in English, ``5.000`` in German."""
    return number_format(n, force_grouping=True)


def answer_field_name(position: int) -> str:
    """The name of the answer field of task ``position`` (0 = training), e.g. ``answer_2``.

    Each step's text box has its own name, so a browser that restores form state from another
    history entry (Chromium does on Back) cannot put one task's text into another task's box.
    """
    return f"answer_{position}"


#: The id of the line that states an answer box's limits (task.html), which describes the box.
ANSWER_LIMITS_ID = "answer-limits"


class AnswerForm(StepForm):
    """A task answer for the task at ``position`` (0 = training, 1..k = main tasks).

    The text arrives in the field :func:`answer_field_name` (``answer_<position>``); a form of
    any other step does not fill it. ``min_chars`` and ``max_chars`` come from the study (1 and
    5,000 characters by default).
    """

    # No length limit of its own: a field too long for the form would refuse the answer, and
    # telemetry must never do that. Over MAX_TELEMETRY_CHARS it is dropped unparsed; the
    # request's size limit (DATA_UPLOAD_MAX_MEMORY_SIZE, 2 MB) bounds the rest.
    client_events = forms.CharField(widget=forms.HiddenInput, required=False, strip=False)

    def __init__(self, *args, position: int, min_chars: int = 1, max_chars: int = 5000, **kwargs):
        super().__init__(*args, **kwargs)
        self.position = position
        self.min_chars = min_chars
        self.max_chars = max_chars
        self.answer_name = answer_field_name(position)
        self.fields[self.answer_name] = forms.CharField(
            widget=forms.Textarea(
                attrs={
                    "rows": 6,
                    "class": "answer",
                    "maxlength": max_chars,
                    # No form state restore, no autofill: the box holds only what was typed here.
                    "autocomplete": "off",
                    "data-answer": "",
                    # The line under the box that states the limits (task.html).
                    "aria-describedby": ANSWER_LIMITS_ID,
                }
            ),
            strip=True,
            error_messages={"required": EMPTY_ANSWER},
        )

    @property
    def answer(self) -> forms.BoundField:
        """The bound answer field, for the template."""
        return self[self.answer_name]

    def is_for_this_page(self) -> bool:
        """Whether the submitted data carry this step's answer field at all.

        A browser always sends a text box, even empty; its absence means the post came from
        another step's form and must not be read as this step's answer.
        """
        return self.answer_name in self.data

    def clean(self) -> dict:
        """Refuse answers with no letter or digit, shorter than ``min_chars`` or longer than
        ``max_chars`` (field errors)."""
        cleaned = super().clean()
        answer = cleaned.get(self.answer_name)
        if answer is None:
            return cleaned
        # Browsers submit a line break as CRLF but count it as one character in the box's
        # counter and maxlength; store and count it as one, so what the counter allows is saved.
        answer = answer.replace("\r\n", "\n").replace("\r", "\n")
        cleaned[self.answer_name] = answer
        # Invisible characters (e.g. zero-width spaces) survive strip() but say nothing.
        if not any(ch.isalnum() for ch in answer):
            self.add_error(self.answer_name, EMPTY_ANSWER)
        elif len(answer) < self.min_chars:
            self.add_error(
                self.answer_name,
                gettext("Your answer has %(count)s characters; please write at least %(min)s.")
                % {"count": _number(len(answer)), "min": _number(self.min_chars)},
            )
        elif len(answer) > self.max_chars:
            self.add_error(
                self.answer_name,
                gettext("Your answer has %(count)s characters; please shorten it to at most %(max)s.")
                % {"count": _number(len(answer)), "max": _number(self.max_chars)},
            )
        return cleaned

    def full_clean(self) -> None:
        """Validate; a refused answer's box gets ``autofocus``, so the page opens at it.

        The message sits by the box, far below the texts (thousands of pixels on a phone); without
        the focus a participant would see the top of the same task and think nothing happened.
        """
        super().full_clean()
        if self.is_bound and self.answer_name in self.errors:
            attrs = self.fields[self.answer_name].widget.attrs
            attrs["autofocus"] = True
            # Django ties the error list to the box only when nothing else describes it.
            attrs["aria-describedby"] = f"{self[self.answer_name].auto_id}_error {ANSWER_LIMITS_ID}"

    def answer_text(self) -> str:
        """The cleaned answer (call after ``is_valid``)."""
        return self.cleaned_data[self.answer_name]

    def clean_client_events(self) -> Telemetry:
        """The browser telemetry, parsed and clamped (:func:`parse_telemetry`)."""
        return parse_telemetry(self.cleaned_data.get("client_events", ""))


class SurveyForm(StepForm):
    """The survey, built from the study's survey definition and the participant's conditions.

    Field names: ``c__<condition>__<item>`` for per-condition items, ``b__<item>`` for background
    items (a ``multi_choice`` item: one checkbox field per option, :mod:`.survey_items`), and
    ``comment``. ``sections`` name the questions in page order; ``questions`` maps each question
    name to its item and its field names.
    """

    comment = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "autocomplete": "off"}),
        required=False,
        max_length=5000,
        strip=True,
    )

    def __init__(self, *args, survey: dict, conditions: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        sections, questions, self.questions = _survey_questions(survey, tuple(conditions))
        self.sections = sections
        # The question fields are shared between forms (see _survey_questions).
        self.fields.update(questions)
        self.fields["comment"].label = survey["comment_prompt"]
        # Keep the comment last.
        self.fields["comment"] = self.fields.pop("comment")

    def bound_sections(self) -> list[dict]:
        """Sections with bound fields (``{"intro", "fields"}``), for code that renders widgets."""
        return [{"intro": s["intro"],
                 "fields": [self[f] for n in s["names"] for f in self.questions[n]["fields"]]}
                for s in self.sections]

    def radio_sections(self) -> list[dict]:
        """The sections as plain data, for ``survey.html``, which writes the radio buttons as
        plain HTML (the same markup as Django's ``RadioSelect``, at a fraction of the cost:
        see docs/performance.md).

        Returns ``[{"intro": str, "questions": [{"name", "id", "kind", "layout", "label",
        "errors": [str], "options": [{"value", "label", "id", "name", "checked"}], "value",
        "min", "max", "max_length"}]}]``; ``kind`` is ``radio``, ``checkbox``, ``number`` or
        ``text`` (:func:`.survey_items.question_kind`), ``layout`` as :func:`_layout` gives it;
        ``checked`` marks the submitted (or initial) choice; ``errors`` are the field's
        messages after validation of a bound form, else empty.
        """
        errors = self.errors if self.is_bound else {}
        sections = []
        for section in self.sections:
            questions = []
            for name in section["names"]:
                question = self.questions[name]
                field_id = f"id_{name}"
                kind = survey_items.question_kind(question["item"])
                if kind == "checkbox":
                    # One question of several checkboxes, each its own one-value field.
                    options = [{"value": "on", "label": self.fields[f].label, "id": f"{field_id}_{i}",
                                "name": f, "checked": self._value(f) in ("on", "True", "true", "1")}
                               for i, f in enumerate(question["fields"])]
                    messages = [m for f in question["fields"] for m in errors.get(f, ())]
                else:
                    value = self._value(name)
                    options = [{"value": choice, "label": label, "id": f"{field_id}_{i}", "name": name,
                                "checked": choice == value}
                               for i, (choice, label) in enumerate(getattr(self.fields[name], "choices", ()))]
                    messages = list(errors.get(name, ()))
                field = self.fields[question["fields"][0]]
                questions.append({
                    "name": name, "id": field_id, "kind": kind, "label": question["item"]["text"],
                    "layout": _layout(question["item"]),
                    "errors": messages, "options": options, "value": self._value(name),
                    "min": getattr(field, "min_value", None), "max": getattr(field, "max_value", None),
                    "max_length": getattr(field, "max_length", None),
                })
            sections.append({"intro": section["intro"], "questions": questions})
        return sections

    def _value(self, name: str) -> str:
        """The submitted (bound) or initial value of field ``name`` as text, ``""`` if none."""
        value = self.data.get(name) if self.is_bound else self.initial.get(name)
        return "" if value is None else str(value)

    def first_error_id(self) -> str | None:
        """The HTML id the error summary links to: the first option of the first refused
        question in page order, else the comment box when only it was refused; ``None`` for an
        unbound or valid form.

        The link points at a radio button, not at the question's text, because following a link
        to a focusable element moves the keyboard focus there too (a screen reader then reads the
        question, which labels the radio group).
        """
        if not self.is_bound or not self.errors:
            return None
        for section in self.sections:
            for name in section["names"]:
                question = self.questions[name]
                if any(f in self.errors for f in question["fields"]):
                    kind = survey_items.question_kind(question["item"])
                    return f"id_{name}_0" if kind in ("radio", "checkbox") else f"id_{name}"
        return self["comment"].auto_id if "comment" in self.errors else None

    def responses(self) -> dict[tuple[str, str], object]:
        """``{(condition or "background", item): answer}`` from the cleaned data: 1..5 for an
        item without a type, else as :func:`.survey_items.cleaned_answer` gives it."""
        out = {}
        for name, question in self.questions.items():
            if name.startswith("c__"):
                _, condition, item = name.split("__", 2)
            else:
                condition, item = "background", name[3:]
            out[(condition, item)] = survey_items.cleaned_answer(question["item"], name, self.cleaned_data)
        return out


def _layout(item) -> str:
    """The CSS class of a question's choices: ``options`` (a list) for a choice, ``long-scale``
    (a list on a phone, where more than five points no longer fit one row) for a likert item of
    more than five points, else none."""
    if item.get("type") in ("choice", "multi_choice"):
        return "options"
    return "long-scale" if len(item.get("labels", ())) > 5 else ""


# Bounded so that a long-running process that sees many study versions cannot grow without end.
_MAX_SURVEYS = 256
_SURVEY_QUESTIONS: dict[tuple, tuple] = {}


def _survey_questions(survey: dict, conditions: tuple[str, ...]) -> tuple[list[dict], dict, dict]:
    """The survey's sections (``[{"intro", "names"}]``), question fields (``{name: field}``)
    and questions (``{question name: {"item", "fields": [field names]}}``) for ``conditions``,
    built once per survey definition and order.

    Building 10 ``ChoiceField`` with their radio widgets took about 0.27 ms per form, on the GET
    and the POST of every survey page. The fields are shared by every form built from the same
    ``survey`` dict (a compiled study plan's, which never changes: an edit makes a new plan), so
    nothing may change them after this: the survey forms only read them, and their markup is
    written as plain HTML, never by widgets that would keep per-form state.
    """
    key = (id(survey), conditions)
    cached = _SURVEY_QUESTIONS.get(key)
    if cached is not None and cached[0] is survey:
        return cached[1], cached[2], cached[3]
    likert = [(str(i + 1), label) for i, label in enumerate(survey["likert_scale"])]
    frequency = [(str(i + 1), label) for i, label in enumerate(survey["frequency_scale"])]
    fields: dict[str, forms.Field] = {}
    questions: dict[str, dict] = {}

    def ask(item, name: str, scale) -> str:
        if item.get("type") in (None, "scale"):
            asked = {name: _radio_question(item["text"], scale)}
        else:
            asked = survey_items.question_fields(item, name)
        fields.update(asked)
        questions[name] = {"item": item, "fields": list(asked)}
        return name

    sections = [
        {"intro": survey["condition_intros"][condition],
         "names": [ask(item, f"c__{condition}__{item['key']}", likert) for item in survey["condition_items"]]}
        for condition in conditions
    ]
    bg_names = [ask(item, f"b__{item['key']}", frequency) for item in survey.get("background_items", [])]
    if bg_names:
        sections.append({"intro": survey.get("background_intro", ""), "names": bg_names})
    if len(_SURVEY_QUESTIONS) >= _MAX_SURVEYS:
        _SURVEY_QUESTIONS.clear()
    # The survey itself is kept too, so that its id cannot be reused by another dict.
    _SURVEY_QUESTIONS[key] = (survey, sections, fields, questions)
    return sections, fields, questions


def _radio_question(text: str, choices: list[tuple[str, str]]) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=text,
        choices=choices,
        widget=forms.RadioSelect,
        error_messages={"required": gettext_lazy("Please choose one option.")},
    )
