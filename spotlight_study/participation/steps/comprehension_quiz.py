"""The ``comprehension_quiz`` page a study file inserts (``pages:``, ``studies/pages.py``):
multiple-choice questions about the instructions. A try passes when every answer is right; a
failed try shows the instructions and their example again above the questions, up to
``max_tries`` tries, all stored (:mod:`.checks`). After the last failed try the quiz's
``on_fail`` applies, as the instruction check's policy applies to its last attempt: ``flag``
(the default: continue, the failure stored and shown), ``end`` (the failed-check code) or
``return`` (asked to return the submission on Prolific). One step per place."""
from __future__ import annotations

from django.utils.translation import gettext
from rest_framework import serializers

from spotlight_study.studies.pages import (
    PAGE_PLACE_FIELD, QUIZ_ON_FAIL, QuestionSerializer, on_fail_field, page_kind_register,
)

from . import keys
from .checks import CheckKind, check_spec


class ComprehensionQuizPageSerializer(serializers.Serializer):
    """One ``pages:`` entry of kind ``comprehension_quiz``: ``questions`` about the instructions
    (1 to 10, each ``question``, ``options``, ``correct``), ``max_tries`` (1 to 5, default 2: a
    failed try shows the instructions again before the next) and ``on_fail`` after the last failed
    try (``flag``, ``end``, ``return``; default ``flag``)."""

    kind = serializers.ChoiceField(choices=["comprehension_quiz"])
    at = PAGE_PLACE_FIELD
    questions = QuestionSerializer(many=True, min_length=1, max_length=10)
    max_tries = serializers.IntegerField(min_value=1, max_value=5, default=2)
    on_fail = on_fail_field(QUIZ_ON_FAIL)


# The study file's schema (studies/pages.py) checks a quiz's keys with this.
page_kind_register("comprehension_quiz", ComprehensionQuizPageSerializer)

COMPREHENSION_QUIZ = CheckKind(
    kind="comprehension_quiz",
    questions=lambda page: list(page.get("questions", ())),
    tries=lambda page: int(page.get("max_tries", 2)),
    policy=lambda page: page.get("on_fail", "flag"),
    reread=True,
    label=lambda: "comprehension quiz",
    saved=lambda: gettext("Your answers to the questions about the instructions are saved"),
    here=lambda: gettext("these are the questions about the instructions"),
)
_TEMPLATE = "participation/comprehension_quiz.html"

QUIZ_AFTER_INSTRUCTIONS = check_spec(keys.QUIZ_AFTER_INSTRUCTIONS, "after_instructions", COMPREHENSION_QUIZ, _TEMPLATE)
QUIZ_BETWEEN_TASKS = check_spec(keys.QUIZ_BETWEEN_TASKS, "between_tasks", COMPREHENSION_QUIZ, _TEMPLATE)
QUIZ_BEFORE_SURVEY = check_spec(keys.QUIZ_BEFORE_SURVEY, "before_survey", COMPREHENSION_QUIZ, _TEMPLATE)
QUIZ_END = check_spec(keys.QUIZ_END, "end", COMPREHENSION_QUIZ, _TEMPLATE)
