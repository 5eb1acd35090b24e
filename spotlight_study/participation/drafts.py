"""Drafts: what a participant typed, kept on their row for the page's next GET.

Two kinds, both ``Participant.draft = {"token": step token of the page, "data": {field: value},
"mark": writer.seq}`` (the mark: :mod:`.draft_marks`; a draft of an earlier draft.js has none):

- a **refused** draft (:func:`draft_save`): the fields of a refused form (empty or too long
  answer, incomplete survey), written by the step POST on a row it has locked; its page shows
  them with their errors;
- a **typed** draft (:func:`typed_draft_save`, marked ``"typed": true``): what ``static/js/
  draft.js`` sends while the participant types (an answer box, the survey's choices and
  comment); its page shows them as they were, without errors.

The storage of both is :mod:`.steps.draft_store` (the step machine restores them); which
fields a page's typed draft may hold is its spec's ``draft_kind`` (``"answer"``, ``"survey"``).

A draft is never an answer: no answer, survey answer or export reads it, and every step change
clears it in the step's own ``UPDATE``. A typed draft is one conditional ``UPDATE`` of the row
(no read, no lock): it lands only while the participant is in progress on the step its token
names, so a stale page's draft, or one that arrives after the step was submitted, changes
nothing, and a draft of one step can never replace another step's.
"""

from __future__ import annotations

import hmac

from django.utils import timezone

from spotlight_study.studies.plan import StudyPlan

from .draft_marks import MARK_FIELD, draft_mark_of
from .errors import ForeignDraft, InvalidDraft
from .models import Participant
from .services import step_token_of
from .steps.draft_store import DRAFT_NUL, draft_data, draft_is_typed, draft_save, draft_stored
from .steps.lookup import draft_kind
from .steps.statements import typed_draft_saved
from .survey_items import draft_choices

__all__ = [
    "COMMENT_MAX_CHARS", "DRAFT_NUL", "draft_data", "draft_is_typed", "draft_save",
    "typed_draft_fields", "typed_draft_save",
]

#: Fields every draft request carries besides the page's own.
_CARRIED = frozenset({"csrfmiddlewaretoken", "token", MARK_FIELD})
#: The survey comment's limit (``SurveyForm.comment``).
COMMENT_MAX_CHARS = 5000


# --- typed drafts ------------------------------------------------------------------------------

_SURVEY_NAMES: dict[int, tuple[StudyPlan, dict[str, frozenset[str]]]] = {}
_MAX_PLANS = 256


def _survey_choices(plan: StudyPlan) -> dict[str, frozenset[str]]:
    """``{field name: its values}`` of the survey of ``plan`` over all the study's conditions,
    built once per plan (a compiled plan never changes: an edit makes a new one)."""
    cached = _SURVEY_NAMES.get(id(plan))
    if cached is not None and cached[0] is plan:
        return cached[1]
    names = draft_choices(plan.survey, plan.conditions)  # typed items too (survey_items.py)
    if len(_SURVEY_NAMES) >= _MAX_PLANS:
        _SURVEY_NAMES.clear()
    _SURVEY_NAMES[id(plan)] = (plan, names)  # the plan is kept so that its id is not reused
    return names


def _typed_length(value: str) -> int:
    # Browsers send a line break as CRLF but count it as one character, as the answer form does.
    return len(value.replace("\r\n", "\n"))


def typed_draft_fields(
    *, plan: StudyPlan, participant_id: int, token: str, fields
) -> tuple[str, int, dict[str, str]]:
    """Check a typed draft of page ``token``; return ``(step, task_index, {field: value})``.

    ``fields`` is the request's form (a ``QueryDict``, or a dict of lists): besides
    ``csrfmiddlewaretoken``, ``token`` and ``draft_mark`` (checked by :func:`typed_draft_save`), only the page's own fields, each at most once: on a
    task page its answer box (``answer_<position>``, at most ``plan.max_answer_chars``
    characters), on the survey its radio buttons (a value of their scale) and ``comment`` (at
    most 5,000 characters). Raises :class:`~.errors.InvalidDraft` (400) for a malformed token,
    a page without anything to type, or any other field or value, and
    :class:`~.errors.ForeignDraft` (403) for a token of another participant.
    """
    parts = token.split(":")
    index_ok = len(parts) == 3 and parts[1].isascii() and parts[1].isdigit() and len(parts[1]) <= 6
    kind, spec = draft_kind(parts[0]) if index_ok else (None, None)
    if kind is None:
        # Malformed, or a page with nothing to type (its spec has no draft kind).
        raise InvalidDraft("The draft's page token is missing or malformed; nothing was saved.")
    step, task_index = parts[0], int(parts[1])
    expected = step_token_of(participant_id=participant_id, step=step, task_index=task_index)
    if not hmac.compare_digest(expected, token):
        raise ForeignDraft("The draft's page belongs to another participant; nothing was saved.")
    lists = fields.lists() if hasattr(fields, "lists") else fields.items()
    data: dict[str, str] = {}
    if kind == "survey":
        choices = _survey_choices(plan)
        allowed = None
    else:  # "answer": the page's answer box
        choices = {}
        allowed = f"answer_{spec.position(task_index)}"
    for name, values in lists:
        if name in _CARRIED:
            continue
        if len(values) != 1:
            raise InvalidDraft(f"The field {name[:60]!r} is given more than once; nothing was saved.")
        value = values[0]
        if name == allowed:
            if _typed_length(value) > plan.max_answer_chars:
                raise InvalidDraft(
                    f"The answer is longer than {plan.max_answer_chars:,} characters; nothing was saved."
                )
        elif allowed is None and name == "comment":
            if _typed_length(value) > COMMENT_MAX_CHARS:
                raise InvalidDraft(
                    f"The comment is longer than {COMMENT_MAX_CHARS:,} characters; nothing was saved."
                )
        elif name in choices:
            if value not in choices[name]:
                raise InvalidDraft(f"{value[:20]!r} is not a choice of {name[:60]!r}; nothing was saved.")
        else:
            raise InvalidDraft(f"This page has no field {name[:60]!r}; nothing was saved.")
        data[name] = value
    return step, task_index, data


def typed_draft_save(*, plan: StudyPlan, participant_id: int, token: str, fields) -> bool:
    """Keep what the participant has typed so far on the page ``token``; whether it was kept.

    ``fields`` as for :func:`typed_draft_fields`, which checks them first (raising
    :class:`~.errors.InvalidDraft` or :class:`~.errors.ForeignDraft`; nothing is stored then),
    and its ``draft_mark`` (:func:`.draft_marks.draft_mark_of`, also ``InvalidDraft``), kept with
    the draft when given.
    The draft replaces the participant's draft in one ``UPDATE`` that matches only while they
    are in progress in ``plan``'s study on the token's step: ``False`` (nothing changed) for a
    stale page, a page submitted meanwhile, an ended participant or one that no longer exists.
    Of two tabs of the same page, the later save wins.

    Call it outside a transaction, as the view does: on PostgreSQL the statement turns
    synchronous commit off for the transaction it runs in
    (:data:`.steps.statements.ASYNC_COMMIT_CONDITION`),
    which should hold nothing but the draft (:data:`.steps.statements.TYPED_DRAFT_SAVED_SQL`).
    """
    step, task_index, data = typed_draft_fields(
        plan=plan, participant_id=participant_id, token=token, fields=fields
    )
    draft = {"token": token, "data": draft_stored(data), "typed": True}
    mark = draft_mark_of(fields)
    if mark is not None:
        draft["mark"] = mark
    changed = typed_draft_saved(
        values={
            "draft": draft,
            "updated_at": timezone.now(),
        },
        where={
            "id": participant_id,
            "study": plan.pk,
            "status": Participant.Status.IN_PROGRESS,
            "step": step,
            "task_index": task_index,
        },
    )
    return changed == 1
