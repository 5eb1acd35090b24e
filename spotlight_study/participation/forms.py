"""Forms of the participant flow. They validate input; services change state."""
from __future__ import annotations

import json

from django import forms
from django.core.validators import RegexValidator

from .services import Telemetry

_hex24 = RegexValidator(
    r"^[0-9a-f]{24}$", message="must be 24 characters long and use only 0-9 and a-f."
)

# Upper bounds for browser telemetry, so that a forged value cannot distort summaries.
_MAX_EVENTS = 200
_MAX_COUNT = 100_000
_MAX_HIDDEN_MS = 24 * 60 * 60 * 1000


class EntryForm(forms.Form):
    """Prolific's URL parameters: each 24 lowercase hex characters."""

    PROLIFIC_PID = forms.CharField(validators=[_hex24], error_messages={"required": "is missing."})
    STUDY_ID = forms.CharField(validators=[_hex24], error_messages={"required": "is missing."})
    SESSION_ID = forms.CharField(validators=[_hex24], error_messages={"required": "is missing."})

    def problems(self) -> list[str]:
        """Readable problems, e.g. ``["PROLIFIC_PID is missing."]`` (call after ``is_valid``)."""
        return [f"{name} {' '.join(errs)}" for name, errs in self.errors.items()]


class StepForm(forms.Form):
    """Base form: carries the token of the page it was rendered for."""

    token = forms.CharField(widget=forms.HiddenInput, max_length=40)


class ConsentForm(StepForm):
    """Consent decision: the button pressed, ``agree`` or ``decline``."""

    decision = forms.ChoiceField(choices=[("agree", "agree"), ("decline", "decline")])


def parse_telemetry(raw: str) -> Telemetry:
    """Parse the JSON that ``static/js/flow.js`` puts in the hidden ``client_events`` field.

    Shape: ``{"paste_count": int, "paste_chars": int, "hidden_ms": int, "blur_count": int,
    "events": [{"t": ms since page load, "type": str, ...}]}``. Telemetry is evidence only, so a
    missing or malformed value gives zeros instead of an error the participant would see.
    """
    try:
        data = json.loads(raw) if raw else {}
    except (ValueError, TypeError):
        return Telemetry()
    if not isinstance(data, dict):
        return Telemetry()

    def count(name: str, cap: int) -> int:
        value = data.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return 0
        return int(min(max(value, 0), cap))

    events = data.get("events", [])
    if not isinstance(events, list):
        events = []
    clean_events = [
        {k: v for k, v in e.items() if k in {"t", "type", "chars"} and isinstance(v, (int, float, str))}
        for e in events[:_MAX_EVENTS]
        if isinstance(e, dict)
    ]
    return Telemetry(
        paste_count=count("paste_count", _MAX_COUNT),
        paste_chars=count("paste_chars", _MAX_COUNT * 10),
        hidden_ms=count("hidden_ms", _MAX_HIDDEN_MS),
        blur_count=count("blur_count", _MAX_COUNT),
        events=clean_events,
    )


class AnswerForm(StepForm):
    """A task answer. ``max_chars`` comes from the study (5,000 by default)."""

    answer = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "class": "answer"}),
        strip=True,
        error_messages={"required": "Please describe the differences you see before continuing."},
    )
    client_events = forms.CharField(widget=forms.HiddenInput, required=False, max_length=40_000)

    def __init__(self, *args, max_chars: int = 5000, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_chars = max_chars
        self.fields["answer"].widget.attrs["maxlength"] = max_chars

    def clean_answer(self) -> str:
        answer = self.cleaned_data["answer"]
        # Invisible characters (e.g. zero-width spaces) survive strip() but say nothing.
        if not any(ch.isalnum() for ch in answer):
            raise forms.ValidationError(
                "Please describe the differences you see before continuing."
            )
        if len(answer) > self.max_chars:
            raise forms.ValidationError(
                f"Your answer has {len(answer):,} characters; please shorten it to at most "
                f"{self.max_chars:,}."
            )
        return answer

    def clean_client_events(self) -> Telemetry:
        return parse_telemetry(self.cleaned_data.get("client_events", ""))


class SurveyForm(StepForm):
    """The survey, built from the study's survey definition and the participant's conditions.

    Field names: ``c__<condition>__<item>`` for per-condition items, ``b__<item>`` for background
    items, and ``comment``.
    """

    comment = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), required=False, max_length=5000, strip=True
    )

    def __init__(self, *args, survey: dict, conditions: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        likert = [(str(i + 1), label) for i, label in enumerate(survey["likert_scale"])]
        frequency = [(str(i + 1), label) for i, label in enumerate(survey["frequency_scale"])]
        self.sections = []
        for condition in conditions:
            names = []
            for item in survey["condition_items"]:
                name = f"c__{condition}__{item['key']}"
                self.fields[name] = forms.ChoiceField(
                    label=item["text"],
                    choices=likert,
                    widget=forms.RadioSelect,
                    error_messages={"required": "Please choose one option."},
                )
                names.append(name)
            self.sections.append({"intro": survey["condition_intros"][condition], "names": names})
        bg_names = []
        for item in survey.get("background_items", []):
            name = f"b__{item['key']}"
            self.fields[name] = forms.ChoiceField(
                label=item["text"],
                choices=frequency,
                widget=forms.RadioSelect,
                error_messages={"required": "Please choose one option."},
            )
            bg_names.append(name)
        if bg_names:
            self.sections.append({"intro": survey.get("background_intro", ""), "names": bg_names})
        self.fields["comment"].label = survey["comment_prompt"]
        # Keep the comment last.
        self.fields["comment"] = self.fields.pop("comment")

    def bound_sections(self) -> list[dict]:
        """Sections with bound fields, for the template."""
        return [{"intro": s["intro"], "fields": [self[n] for n in s["names"]]} for s in self.sections]

    def responses(self) -> dict[tuple[str, str], int]:
        """``{(condition or "background", item): 1..5}`` from the cleaned data."""
        out = {}
        for name, value in self.cleaned_data.items():
            if name.startswith("c__"):
                _, condition, item = name.split("__", 2)
                out[(condition, item)] = int(value)
            elif name.startswith("b__"):
                out[("background", name[3:])] = int(value)
        return out
