"""The ``comprehension_quiz`` page a study file inserts (``pages:``, ``studies/pages.py``):
multiple-choice questions about the instructions. A try passes when every answer is right; a
failed try shows the instructions and their example again above the questions, up to
``max_tries`` tries, all stored (:mod:`.checks`). After the last failed try the quiz's
``on_fail`` applies, as the instruction check's policy applies to its last attempt: ``flag``
(the default: continue, the failure stored and shown), ``end`` (the failed-check code) or
``return`` (asked to return the submission on Prolific). One step per place."""
from __future__ import annotations

from django.utils.translation import gettext

from . import keys
from .checks import CheckKind, check_spec

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
