"""The quality flags of an answer: one definition, used by every page and file that shows them.

Pure functions over plain values (no ORM, no Django), so the export (``responses.csv``), the
researcher page, the annotator's neutral evidence and the live monitor cannot disagree. Callers
fetch the values, build the evidence with :func:`evidence_of` (from a ``TaskResponse`` or a
``values_list(*EVIDENCE_FIELDS, named=True)`` row), call these functions and show the result;
pages that count flags per participant use :func:`participant_flag_counts` and
:func:`flag_counts`. The dashboard and the live monitor count the same flags in the database
instead, with the SQL in :mod:`.flag_queries` (tested equal to these functions); a change of a
rule here must be made there too.

The flags, by key (in :data:`FLAG_KEYS` order):

``very_short_time``
    The answer was saved less than the study's ``short_time_flag_seconds`` after its task page
    was first served (``time_on_task_ms``, server clock). No flag while the time is unknown.
``pasted``
    The browser reported at least one paste into the answer box (``paste_count`` or
    ``paste_chars`` above 0). Missing when JavaScript is off, so its absence proves nothing.
``long_time_hidden``
    The tab was hidden (another tab or window in front) for at least
    :data:`LONG_HIDDEN_MIN_MS` (30 s) *and* for at least :data:`LONG_HIDDEN_MIN_SHARE` (half) of
    the time on task. A short look at another tab is normal; being away for most of a task
    suggests the answer was written or looked up elsewhere. With the time on task unknown, only
    the 30 s bound applies.
``identical_answer``
    Another saved answer of the same kind (main or training) in the same population has the
    same text after :func:`normalize_answer` (whitespace collapsed, case folded). The other
    answer may be the participant's own (the same text pasted into both tasks) or another
    participant's (a shared template, tool or collusion): both mean the text was not written
    for this task. The population is the set of answers being looked at together: real
    participants are compared with real participants, pilot participants with pilot
    participants.
``failed_instruction_check``
    The participant's training answer failed the automatic instruction check
    (``Participant.instruction_check_passed is False``). It is a flag of the participant, so it is
    set on each of their answers. Annotators are not shown it: they label the training answer
    whose final label decides the check.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeVar

#: A participant key (a row id, a pseudonym): anything hashable.
K = TypeVar("K", bound=Hashable)

VERY_SHORT_TIME = "very_short_time"
PASTED = "pasted"
LONG_TIME_HIDDEN = "long_time_hidden"
IDENTICAL_ANSWER = "identical_answer"
FAILED_INSTRUCTION_CHECK = "failed_instruction_check"

#: Every flag key, in the order in which flags are listed everywhere.
FLAG_KEYS: tuple[str, ...] = (
    VERY_SHORT_TIME,
    PASTED,
    LONG_TIME_HIDDEN,
    IDENTICAL_ANSWER,
    FAILED_INSTRUCTION_CHECK,
)

#: The flags that hold a submission back from bulk approval for a researcher's look, unless
#: the study file names others (``holding_flags``): those that say the text may not have been
#: written in the answer box. ``identical_answer`` is left to the study file: a short, common
#: answer ("no difference") is identical by chance. The other flags have common innocent causes
#: (a quick writer, a look at another tab) and the instruction check has its own review.
DEFAULT_HOLDING_FLAGS: tuple[str, ...] = (PASTED,)

#: Words for people, by flag key.
FLAG_LABELS: dict[str, str] = {
    VERY_SHORT_TIME: "very short time",
    PASTED: "pasted",
    LONG_TIME_HIDDEN: "long time hidden",
    IDENTICAL_ANSWER: "identical answer",
    FAILED_INSTRUCTION_CHECK: "failed instruction check",
}

#: ``long_time_hidden``: the tab was hidden for at least this long (ms) ...
LONG_HIDDEN_MIN_MS = 30_000
#: ... and for at least this share of the time on task.
LONG_HIDDEN_MIN_SHARE = 0.5


class AnswerEvidence(NamedTuple):
    """What is known about one saved answer, as plain values (immutable).

    ``time_on_task_ms`` and ``hidden_ms`` are in milliseconds (``time_on_task_ms`` is ``None``
    while unknown); ``paste_count`` and ``paste_chars`` are counts reported by the browser;
    ``instruction_check_passed`` is the participant's result (``None`` before the training task).
    A named tuple, not a dataclass: the pages build one per answer, 20,000 on a large study,
    and a tuple costs a fifth of a frozen dataclass to make.
    """

    answer: str
    time_on_task_ms: int | None = None
    paste_count: int = 0
    paste_chars: int = 0
    hidden_ms: int = 0
    instruction_check_passed: bool | None = None


#: The ``TaskResponse`` fields an :class:`AnswerEvidence` is built from (for ``values_list``).
EVIDENCE_FIELDS: tuple[str, ...] = ("answer", "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms")


def evidence_of(response: object, *, instruction_check_passed: bool | None = None) -> AnswerEvidence:
    """The evidence of one saved answer: the one place an :class:`AnswerEvidence` is built.

    ``response`` is a ``TaskResponse`` or any object with the :data:`EVIDENCE_FIELDS` as
    attributes (e.g. a row of ``values_list(*EVIDENCE_FIELDS, named=True)``, which costs less
    than model instances on the pages that read thousands of answers).
    ``instruction_check_passed`` is the participant's result; leave it ``None`` where the check
    must not flag the answer (the annotator's evidence, or a page that counts it once per
    participant).
    """
    return AnswerEvidence(
        answer=response.answer,
        time_on_task_ms=response.time_on_task_ms,
        paste_count=response.paste_count,
        paste_chars=response.paste_chars,
        hidden_ms=response.hidden_ms,
        instruction_check_passed=instruction_check_passed,
    )


def normalize_answer(text: str) -> str:
    """The form in which two answers count as identical: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def is_very_short_time(time_on_task_ms: int | None, short_time_flag_seconds: int | float) -> bool:
    """Whether the time on task (ms) is under ``short_time_flag_seconds`` (s); ``False`` when
    the time is unknown."""
    return time_on_task_ms is not None and time_on_task_ms < short_time_flag_seconds * 1000


def is_pasted(paste_count: int, paste_chars: int = 0) -> bool:
    """Whether the browser reported a paste into the answer box."""
    return paste_count > 0 or paste_chars > 0


def is_long_time_hidden(hidden_ms: int, time_on_task_ms: int | None) -> bool:
    """Whether the tab was hidden for at least 30 s and at least half of the time on task (ms)."""
    if hidden_ms < LONG_HIDDEN_MIN_MS:
        return False
    if not time_on_task_ms:
        return True
    return hidden_ms >= LONG_HIDDEN_MIN_SHARE * time_on_task_ms


def repeated_answers(answers: Iterable[str]) -> set[str]:
    """The normalized texts (:func:`normalize_answer`) that occur more than once in ``answers``.

    ``answers`` is one population of one kind (e.g. all main answers of the real participants);
    an answer is ``identical_answer`` when its normalized text is in the returned set.
    """
    counts = Counter(normalize_answer(a) for a in answers)
    return {text for text, n in counts.items() if n > 1}


def answer_flags(
    evidence: AnswerEvidence,
    *,
    short_time_flag_seconds: int | float,
    identical: bool,
    include_instruction_check: bool = True,
) -> list[str]:
    """The flag keys of one answer, in :data:`FLAG_KEYS` order.

    Parameters
    ----------
    evidence : AnswerEvidence
    short_time_flag_seconds : int or float
        The study's threshold, in seconds.
    identical : bool
        Whether the answer's text is repeated in its population (see :func:`repeated_answers`;
        the caller decides the population because it holds the other answers).
    include_instruction_check : bool
        ``False`` for the annotator's evidence, which never shows the participant's check.
    """
    flags = []
    if is_very_short_time(evidence.time_on_task_ms, short_time_flag_seconds):
        flags.append(VERY_SHORT_TIME)
    if is_pasted(evidence.paste_count, evidence.paste_chars):
        flags.append(PASTED)
    if is_long_time_hidden(evidence.hidden_ms, evidence.time_on_task_ms):
        flags.append(LONG_TIME_HIDDEN)
    if identical:
        flags.append(IDENTICAL_ANSWER)
    if include_instruction_check and evidence.instruction_check_passed is False:
        flags.append(FAILED_INSTRUCTION_CHECK)
    return flags


def flags_of_answers(
    answers: Sequence[AnswerEvidence], *, short_time_flag_seconds: int | float
) -> list[list[str]]:
    """The flags of each answer of one population of one kind, in the order given.

    Computes ``identical_answer`` over ``answers`` themselves (:func:`repeated_answers`).
    """
    # Each text normalized once (it is the costly part), then counted: as repeated_answers.
    normalized = [normalize_answer(a.answer) for a in answers]
    seen = Counter(normalized)
    return [
        answer_flags(a, short_time_flag_seconds=short_time_flag_seconds, identical=seen[text] > 1)
        for a, text in zip(answers, normalized)
    ]


def participant_flag_counts(
    answers: Iterable[tuple[K, AnswerEvidence]], *, short_time_flag_seconds: int | float
) -> dict[K, Counter]:
    """The flagged answers of one population, counted per participant and flag.

    Parameters
    ----------
    answers : iterable of (participant key, AnswerEvidence)
        The saved answers of one population of one kind (e.g. the main answers of the real
        participants); ``identical_answer`` is computed over them (:func:`flags_of_answers`).
    short_time_flag_seconds : int or float
        The study's threshold, in seconds.

    Returns
    -------
    dict
        ``{participant key: Counter(flag key -> number of flagged answers)}``, for the
        participants with at least one flagged answer only (on large studies most have none).
    """
    pairs = list(answers)
    per_answer = flags_of_answers(
        [evidence for _key, evidence in pairs], short_time_flag_seconds=short_time_flag_seconds
    )
    counts: dict[K, Counter] = {}
    for (key, _evidence), flags in zip(pairs, per_answer):
        if flags:
            mine = counts.get(key)
            if mine is None:
                mine = counts[key] = Counter()
            for flag in flags:
                mine[flag] += 1
    return counts


def flag_counts(
    counts_by_participant: Mapping[object, Mapping[str, int]],
    *,
    failed_check: Iterable[object] = (),
) -> list[dict]:
    """The count of answers and of participants per flag.

    Parameters
    ----------
    counts_by_participant : mapping
        ``{participant key: {flag key: number of flagged answers}}``, as
        :func:`participant_flag_counts` returns.
    failed_check : iterable
        Keys of the participants whose instruction check failed, also those without a flagged
        answer yet (ended at the check, or between the training and the first main task).

    Returns
    -------
    list of dict
        One ``{"flag", "label", "answers", "participants"}`` per key of :data:`FLAG_KEYS`, in
        that order, zeros included.
    """
    answers: Counter = Counter()
    people: dict[str, set] = {key: set() for key in FLAG_KEYS}
    for participant, counts in counts_by_participant.items():
        for flag, n in counts.items():
            if n:
                answers[flag] += n
                people[flag].add(participant)
    people[FAILED_INSTRUCTION_CHECK].update(failed_check)
    return [
        {
            "flag": key,
            "label": FLAG_LABELS[key],
            "answers": answers[key],
            "participants": len(people[key]),
        }
        for key in FLAG_KEYS
    ]
