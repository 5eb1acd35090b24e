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


class ParticipantFilter(django_filters.FilterSet):
    """``?status=completed&cell=2&instruction_check_passed=false&started_after=...``."""

    cell = django_filters.NumberFilter(field_name="cell_index")
    started_after = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Participant
        fields = ["status", "step", "instruction_check_passed"]


class ResponseFilter(django_filters.FilterSet):
    """``?setting=doctor&condition=pattern&kind=main``."""

    setting = django_filters.CharFilter(field_name="setting__key")
    kind = django_filters.ChoiceFilter(field_name="setting__kind", choices=Setting.Kind.choices)
    condition = django_filters.ChoiceFilter(choices=Condition.choices)

    class Meta:
        model = TaskResponse
        fields = ["position"]


class SurveyAnswerFilter(django_filters.FilterSet):
    """``?condition=background&item=llm_use``."""

    class Meta:
        model = SurveyAnswer
        fields = ["condition", "item"]


class SubmissionFilter(django_filters.FilterSet):
    """``?status=AWAITING REVIEW&review_action=approved``."""

    class Meta:
        model = Submission
        fields = ["status", "review_action"]
