"""django-filter filter sets of the researcher API's lists (query parameters)."""
from __future__ import annotations

import django_filters

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.prolific.models import Submission
from spotlight_study.studies.models import Condition, Setting, Study


class StudyFilter(django_filters.FilterSet):
    """``?status=live``."""

    class Meta:
        model = Study
        fields = ["status"]


class SettingFilter(django_filters.FilterSet):
    """``?kind=main``."""

    class Meta:
        model = Setting
        fields = ["kind"]


class _PilotFilterSet(django_filters.FilterSet):
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

    cell = django_filters.NumberFilter(field_name="cell_index")
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

    class Meta:
        model = TaskResponse
        fields = ["position"]


class SurveyAnswerFilter(_PilotFilterSet):
    """``?condition=background&item=llm_use``."""

    pilot_lookup = "participant__is_pilot"

    class Meta:
        model = SurveyAnswer
        fields = ["condition", "item"]


class SubmissionFilter(django_filters.FilterSet):
    """``?status=AWAITING REVIEW&review_action=approved``."""

    class Meta:
        model = Submission
        fields = ["status", "review_action"]
