"""The keys of the built-in steps: the values ``Participant.step`` holds.

The only spelling of each concrete step name (``tests/test_architecture.py`` keeps every other
mention inside ``participation/steps/``). Code outside this package asks the registry
(:mod:`.spec`) about a participant's step instead of comparing it with one of these.
"""
from __future__ import annotations

CONSENT = "consent"
INSTRUCTIONS = "instructions"
TRAINING = "training"
REREAD = "reread"
TASK = "task"
SURVEY = "survey"
DONE = "done"
#: The end page of a participant whose status is one of ``Participant.Status.ENDED``; picked by
#: status, never stored as a step.
ENDED = "ended"
#: The pages a study file inserts (``pages:``, ``studies/pages.py``): one step per place, passed
#: by when the study has no page there.
PAGE_AFTER_INSTRUCTIONS = "page_after_instr"
PAGE_BETWEEN_TASKS = "page_between_tasks"
PAGE_BEFORE_SURVEY = "page_before_survey"
PAGE_END = "page_end"
#: The check pages a study file inserts, one step per kind and place (``attention_check.py``,
#: ``comprehension_quiz.py``); at most one of a place's steps applies to a study.
CHECK_AFTER_INSTRUCTIONS = "check_after_instr"
CHECK_BETWEEN_TASKS = "check_between_tasks"
CHECK_BEFORE_SURVEY = "check_before_survey"
CHECK_END = "check_end"
QUIZ_AFTER_INSTRUCTIONS = "quiz_after_instr"
QUIZ_BETWEEN_TASKS = "quiz_between_tasks"
QUIZ_BEFORE_SURVEY = "quiz_before_survey"
QUIZ_END = "quiz_end"
