"""django-filter filter sets of the researcher API's lists (query parameters).

Every filter set here is a :class:`StrictFilterSet`: a query parameter the published schema
forbids is a 400 naming it, never a filter silently left out. django-filter on its own reads an
empty value (``?status=``) and a boolean it does not know (``?instruction_check_passed=maybe``)
as "not given", and a number filter takes ``?position=0.5``.
"""
from __future__ import annotations

import django_filters
from django import forms

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.prolific.models import Submission
from spotlight_study.studies.models import Condition, Setting, Study


class IntegerFilter(django_filters.NumberFilter):
    """A filter on a whole number: ``0.5`` is refused (django-filter's number filter takes it)."""

    field_class = forms.IntegerField


class StrictFilterSet(django_filters.FilterSet):
    """A filter set that refuses (400) an empty parameter (or white space alone) and a boolean
    other than ``true``/``false``, instead of ignoring them as django-filter does."""

    EMPTY = "Empty: give a value, or leave the parameter out."
    NOT_BOOLEAN = "Give true or false."

    def is_valid(self) -> bool:
        """django-filter's validation, plus the two rules above (errors on ``self.errors``)."""
        valid = super().is_valid()
        for name, flt in self.filters.items():
            if name not in self.data:
                continue
            value = self.data.get(name)
            if not value.strip():  # django-filter reads white space alone as "not given" too
                self.form.add_error(name, self.EMPTY)
            elif isinstance(flt, django_filters.BooleanFilter) and value not in ("true", "false"):
                self.form.add_error(name, self.NOT_BOOLEAN)
        return valid and not self.form.errors


class StudyFilter(StrictFilterSet):
    """``?status=live``."""

    class Meta:
        model = Study
        fields = ["status"]


class SettingFilter(StrictFilterSet):
    """``?kind=main``."""

    class Meta:
        model = Setting
        fields = ["kind"]


class _PilotFilterSet(StrictFilterSet):
    """Leaves pilot participants (``manage.py pilot``) out unless ``?include_pilot=true``, as the
    export and the analysis do. ``pilot_lookup`` names the participant's ``is_pilot`` field."""

    pilot_lookup = "is_pilot"
    # A choice, not a BooleanFilter: django-filter reads an unknown boolean as "not given",
    # and a misspelt value should be refused (400), not silently ignored.
    include_pilot = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="_keep",
        label="Include pilot participants: true or false (default).",
    )

    def _keep(self, queryset, name, value):
        return queryset  # applied in filter_queryset, which also runs when the parameter is absent

    def filter_queryset(self, queryset):
        """The filtered rows, without pilot participants' unless ``include_pilot`` is true."""
        queryset = super().filter_queryset(queryset)
        if self.form.cleaned_data.get("include_pilot") != "true":
            queryset = queryset.filter(**{self.pilot_lookup: False})
        return queryset


class ParticipantFilter(_PilotFilterSet):
    """``?status=completed&cell=2&instruction_check_passed=false&started_after=...``."""

    cell = IntegerFilter(field_name="cell_index")
    started_after = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Participant
        fields = ["status", "step", "instruction_check_passed"]


class ResponseFilter(_PilotFilterSet):
    """``?setting=doctor&condition=pattern&kind=main``."""

    pilot_lookup = "participant__is_pilot"

    setting = django_filters.CharFilter(field_name="setting__key")
    kind = django_filters.ChoiceFilter(field_name="setting__kind", choices=Setting.Kind.choices)
    condition = django_filters.ChoiceFilter(choices=Condition.choices)
    position = IntegerFilter(field_name="position")

    class Meta:
        model = TaskResponse
        fields = ["position"]


class SurveyAnswerFilter(_PilotFilterSet):
    """``?condition=background&item=llm_use``."""

    pilot_lookup = "participant__is_pilot"

    class Meta:
        model = SurveyAnswer
        fields = ["condition", "item"]


class SubmissionFilter(StrictFilterSet):
    """``?status=AWAITING REVIEW&review_action=approved``."""

    class Meta:
        model = Submission
        fields = ["status", "review_action"]
