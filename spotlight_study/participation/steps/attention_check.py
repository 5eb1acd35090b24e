"""The ``attention_check`` page a study file inserts (``pages:``, ``studies/pages.py``): one
question with one correct option, and an ``on_fail`` policy with the instruction check's choices
(:mod:`.checks`): ``flag``, ``end``, ``return``, or ``second_attempt`` (one more try at the same
question; a second failure is flagged). One step per place, passed by when the study has no
attention check there."""
from __future__ import annotations

from django.utils.translation import gettext
from rest_framework import serializers

from spotlight_study.studies.pages import (
    ON_FAIL, PAGE_PLACE_FIELD, QuestionSerializer, on_fail_field, page_kind_register,
)

from . import keys
from .checks import CheckKind, check_spec


class AttentionCheckPageSerializer(serializers.Serializer):
    """One ``pages:`` entry of kind ``attention_check``: one ``question`` with its ``options`` and
    the ``correct`` one, and ``on_fail`` (``flag``, ``end``, ``return``, ``second_attempt``;
    default ``flag``)."""

    kind = serializers.ChoiceField(choices=["attention_check"])
    at = PAGE_PLACE_FIELD
    question = serializers.CharField(max_length=2000)
    options = serializers.ListField(
        child=serializers.CharField(max_length=300), min_length=2, max_length=10
    )
    correct = serializers.CharField(max_length=300)
    on_fail = on_fail_field(ON_FAIL)

    def validate(self, attrs: dict) -> dict:
        """Refuses repeated options and a ``correct`` that is not one of them, by key."""
        return QuestionSerializer.validate(self, attrs)


# The study file's schema (studies/pages.py) checks an attention check's keys with this.
page_kind_register("attention_check", AttentionCheckPageSerializer)

ATTENTION_CHECK = CheckKind(
    kind="attention_check",
    questions=lambda page: [page] if page else [],
    tries=lambda page: 2 if page.get("on_fail") == "second_attempt" else 1,
    policy=lambda page: "flag" if page.get("on_fail", "flag") == "second_attempt" else page.get("on_fail", "flag"),
    reread=False,
    label=lambda: "attention check",
    saved=lambda: gettext("Your answer to the check question is saved"),
    here=lambda: gettext("this is a check question"),
)
_TEMPLATE = "participation/attention_check.html"

CHECK_AFTER_INSTRUCTIONS = check_spec(keys.CHECK_AFTER_INSTRUCTIONS, "after_instructions", ATTENTION_CHECK, _TEMPLATE)
CHECK_BETWEEN_TASKS = check_spec(keys.CHECK_BETWEEN_TASKS, "between_tasks", ATTENTION_CHECK, _TEMPLATE)
CHECK_BEFORE_SURVEY = check_spec(keys.CHECK_BEFORE_SURVEY, "before_survey", ATTENTION_CHECK, _TEMPLATE)
CHECK_END = check_spec(keys.CHECK_END, "end", ATTENTION_CHECK, _TEMPLATE)
