"""Forms of the researcher pages: the live monitor's filters and the ending of stalled participants."""
from __future__ import annotations

from django import forms

from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.ending import REASON_MAX_CHARS
from spotlight_study.participation.models import Participant

from .monitor import FLAG_ANY, FLAG_NONE, PILOT_CHOICES, PILOT_EXCLUDE, MonitorFilters


class MonitorFilterForm(forms.Form):
    """The monitor's GET parameters: ``status``, ``flag``, ``pilot``, ``idle`` (minutes) and
    ``page``.

    Every parameter is optional; a value outside its choices, a page that is not a whole
    number from 1, or a parameter given more than once makes the form invalid with a message
    naming the parameter, and the monitor shows that message instead of rows.
    """

    status = forms.ChoiceField(
        required=False,
        choices=[("", "Any status"), *Participant.Status.choices],
        error_messages={"invalid_choice": "Unknown status %(value)s: choose one from the list."},
    )
    flag = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any flags or none"),
            (FLAG_ANY, "At least one flag"),
            (FLAG_NONE, "No flag"),
            *((key, quality_flags.FLAG_LABELS[key]) for key in quality_flags.FLAG_KEYS),
        ],
        error_messages={"invalid_choice": "Unknown flag %(value)s: choose one from the list."},
    )
    pilot = forms.ChoiceField(
        required=False,
        choices=PILOT_CHOICES,
        error_messages={
            "invalid_choice": "Unknown pilot filter %(value)s: use exclude, include or only."
        },
    )
    idle = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=100_000,
        label="Idle for more than (minutes)",
        error_messages={
            "invalid": "Idle minutes must be a whole number from 0.",
            "min_value": "Idle minutes must be a whole number from 0.",
            "max_value": "Idle minutes must be at most 100,000.",
        },
    )
    page = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=10**6,
        error_messages={
            "invalid": "The page must be a whole number from 1.",
            "min_value": "The page must be a whole number from 1.",
            "max_value": "The page must be a whole number from 1.",
        },
    )

    def clean(self) -> dict:
        # A QueryDict keeps every value of a repeated parameter but a field reads only the last;
        # refuse the repeat rather than silently showing one of the filters.
        cleaned = super().clean()
        if hasattr(self.data, "getlist"):
            for name in self.fields:
                values = self.data.getlist(name)
                if len(values) > 1:
                    self.add_error(
                        name,
                        f"Given {len(values)} times ({', '.join(values)}); give one value.",
                    )
        return cleaned

    def filters(self) -> MonitorFilters:
        """The validated filters (call after ``is_valid()`` returned ``True``)."""
        data = self.cleaned_data
        return MonitorFilters(
            status=data.get("status") or "",
            flag=data.get("flag") or "",
            pilot=data.get("pilot") or PILOT_EXCLUDE,
            page=data.get("page") or 1,
            idle_minutes=data.get("idle"),
        )

    def error_text(self) -> str:
        """The errors as one sentence per parameter, for the page."""
        return " ".join(
            f"{name}: {' '.join(errors)}" for name, errors in self.errors.items()
        )


class EndParticipantsForm(forms.Form):
    """The confirmation of ending participants: the chosen ``participant`` pseudonyms (hidden,
    one input each: what the researcher saw is what is ended), the ``reason`` (kept with the
    decision) and whether to ``send_message`` through Prolific."""

    reason = forms.CharField(
        max_length=REASON_MAX_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        error_messages={
            "required": "Give a reason for ending: it is kept with the decision.",
            "max_length": f"The reason has at most {REASON_MAX_CHARS:,} characters.",
        },
    )
    send_message = forms.BooleanField(
        required=False, label="Also send them a Prolific message asking them to return the submission"
    )

    def pseudonyms(self) -> list[str]:
        """The chosen pseudonyms, in the order given."""
        return [p for p in self.data.getlist("participant") if p.strip()] if hasattr(self.data, "getlist") else []
