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
``typed_implausibly_fast``
    At least :data:`TYPED_FAST_MIN_CHARS` characters were typed, at more than the study's
    ``typed_chars_per_minute_max`` characters per minute of active typing (``typing_ms``:
    the gaps between keystrokes, pauses over 2 s left out). Typing in bursts is normal; a
    whole answer at that speed is a script, or text typed by a tool.
``inserted_without_typing``
    Characters that arrived neither by a keystroke nor by a paste (dropped, inserted by
    autocomplete, replacement, dictation or a script: ``dropped_chars + replaced_chars``) make
    up at least the study's ``inserted_without_typing_share`` of the answer and at least
    :data:`INSERTED_MIN_CHARS` characters.
``copied_from_shown_texts``
    At least the study's ``copied_from_shown_texts_share`` of the answer is found, almost
    verbatim, in the texts the participant was shown (``shown_overlap_permille``, measured
    when the answer was saved: :mod:`.writing`). Quoting one short example text is normal;
    an answer that mostly repeats the texts describes nothing.
``near_duplicate``
    Another participant's answer in the same setting and population has a similarity of at
    least the study's ``near_duplicate_similarity`` (0-100, ``near_duplicate_score``,
    measured when the later of the two was saved: :mod:`.writing`). Unlike
    ``identical_answer`` it catches lightly edited copies, but it compares only answers of
    other participants in one setting; an answer identical to another participant's in the
    same setting carries both flags.
``hidden_then_pasted``
    A paste followed, within 30 s, a time away from the page (tab hidden or window blurred)
    of at least the study's ``away_before_paste_seconds`` (``away_before_paste_ms``): the
    pattern of copying an answer from another window.
``failed_instruction_check``
    The participant's training answer failed the automatic instruction check
    (``Participant.instruction_check_passed is False``). It is a flag of the participant, so it is
    set on each of their answers. Annotators are not shown it: they label the training answer
    whose final label decides the check.

Every flag is evidence, not a verdict: the browser's numbers are missing when JavaScript is
off, can be forged, and have known innocent causes (dictation, IME composition, assistive
technology, mobile keyboards: docs/answer-quality.md).
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
TYPED_IMPLAUSIBLY_FAST = "typed_implausibly_fast"
INSERTED_WITHOUT_TYPING = "inserted_without_typing"
COPIED_FROM_SHOWN_TEXTS = "copied_from_shown_texts"
NEAR_DUPLICATE = "near_duplicate"
HIDDEN_THEN_PASTED = "hidden_then_pasted"

#: Every flag key, in the order in which flags are listed everywhere.
FLAG_KEYS: tuple[str, ...] = (
    VERY_SHORT_TIME,
    PASTED,
    LONG_TIME_HIDDEN,
    IDENTICAL_ANSWER,
    TYPED_IMPLAUSIBLY_FAST,
    INSERTED_WITHOUT_TYPING,
    COPIED_FROM_SHOWN_TEXTS,
    NEAR_DUPLICATE,
    HIDDEN_THEN_PASTED,
    FAILED_INSTRUCTION_CHECK,
)

#: The flags of the writing process (issue 21): the five scripted browser participants of
#: tests/e2e/test_writing_evidence.py check exactly these, with ``pasted``.
WRITING_FLAG_KEYS: tuple[str, ...] = (
    PASTED,
    TYPED_IMPLAUSIBLY_FAST,
    INSERTED_WITHOUT_TYPING,
    COPIED_FROM_SHOWN_TEXTS,
    NEAR_DUPLICATE,
    HIDDEN_THEN_PASTED,
)

#: The flags that hold a submission back from bulk approval for a researcher's look, unless
#: the study file names others (``holding_flags``): those that say the text may not have been
#: written in the answer box (the writing-process flags). ``identical_answer`` and
#: ``near_duplicate`` are left to the study file: a short, common answer ("no difference") is
#: identical or nearly so by chance. The other flags have common innocent causes (a quick
#: writer, a look at another tab) and the instruction check has its own review.
DEFAULT_HOLDING_FLAGS: tuple[str, ...] = tuple(k for k in WRITING_FLAG_KEYS if k != NEAR_DUPLICATE)

#: Words for people, by flag key.
FLAG_LABELS: dict[str, str] = {
    VERY_SHORT_TIME: "very short time",
    PASTED: "pasted",
    LONG_TIME_HIDDEN: "long time hidden",
    IDENTICAL_ANSWER: "identical answer",
    TYPED_IMPLAUSIBLY_FAST: "typed implausibly fast",
    INSERTED_WITHOUT_TYPING: "inserted without typing",
    COPIED_FROM_SHOWN_TEXTS: "copied from shown texts",
    NEAR_DUPLICATE: "near-duplicate",
    HIDDEN_THEN_PASTED: "hidden, then pasted",
    FAILED_INSTRUCTION_CHECK: "failed instruction check",
}

#: ``typed_implausibly_fast`` judges only answers with at least this many typed characters.
TYPED_FAST_MIN_CHARS = 30
#: ``inserted_without_typing`` needs at least this many characters inserted without typing.
INSERTED_MIN_CHARS = 20


class FlagThresholds(NamedTuple):
    """The study file's thresholds of the writing-process flags (section ``answer_flags``).

    ``typed_chars_per_minute_max`` (characters per minute of active typing; 1,500 is 300
    words a minute, above any sustained human record), ``inserted_without_typing_share`` and
    ``copied_from_shown_texts_share`` (shares of the answer's characters, 0-1),
    ``near_duplicate_similarity`` (rapidfuzz ``fuzz.ratio``, 0-100) and
    ``away_before_paste_seconds`` (s). The defaults are the documented ones
    (docs/study-file.md).
    """

    typed_chars_per_minute_max: int = 1500
    inserted_without_typing_share: float = 0.3
    copied_from_shown_texts_share: float = 0.5
    near_duplicate_similarity: int = 90
    away_before_paste_seconds: int = 3


#: The thresholds of a study file that sets none.
DEFAULT_THRESHOLDS = FlagThresholds()


def thresholds_from(values: Mapping | None) -> FlagThresholds:
    """The :class:`FlagThresholds` of a study's stored ``answer_flag_thresholds`` mapping
    (validated by the study-file schema); names it does not set take their defaults, names
    it should not have are ignored."""
    if not values:
        return DEFAULT_THRESHOLDS
    return DEFAULT_THRESHOLDS._replace(
        **{k: v for k, v in values.items() if k in FlagThresholds._fields and v is not None}
    )

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
    typed_chars: int = 0
    dropped_chars: int = 0
    replaced_chars: int = 0
    typing_ms: int = 0
    away_before_paste_ms: int = 0
    shown_overlap_permille: int | None = None
    near_duplicate_score: int | None = None


#: The ``TaskResponse`` fields an :class:`AnswerEvidence` is built from (for ``values_list``).
EVIDENCE_FIELDS: tuple[str, ...] = (
    "answer", "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", "typed_chars",
    "dropped_chars", "replaced_chars", "typing_ms", "away_before_paste_ms",
    "shown_overlap_permille", "near_duplicate_score",
)


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
        typed_chars=response.typed_chars,
        dropped_chars=response.dropped_chars,
        replaced_chars=response.replaced_chars,
        typing_ms=response.typing_ms,
        away_before_paste_ms=response.away_before_paste_ms,
        shown_overlap_permille=response.shown_overlap_permille,
        near_duplicate_score=response.near_duplicate_score,
    )


def thresholds_of(study: object) -> FlagThresholds:
    """The :class:`FlagThresholds` of a ``Study`` (or any object with its
    ``answer_flag_thresholds`` mapping; the defaults without one)."""
    return thresholds_from(getattr(study, "answer_flag_thresholds", None))


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


def is_typed_implausibly_fast(typed_chars: int, typing_ms: int, chars_per_minute_max: int | float) -> bool:
    """Whether at least :data:`TYPED_FAST_MIN_CHARS` characters were typed at more than
    ``chars_per_minute_max`` per minute of active typing (``typing_ms``, ms); typed with no
    measurable time at all counts as too fast."""
    return typed_chars >= TYPED_FAST_MIN_CHARS and typed_chars * 60_000 > chars_per_minute_max * typing_ms


def is_inserted_without_typing(answer_chars: int, dropped_chars: int, replaced_chars: int, share: float) -> bool:
    """Whether the characters dropped or inserted without a keystroke or paste are at least
    :data:`INSERTED_MIN_CHARS` and at least ``share`` (0-1) of the answer's ``answer_chars``."""
    inserted = dropped_chars + replaced_chars
    return inserted >= INSERTED_MIN_CHARS and inserted >= share * answer_chars


def is_copied_from_shown_texts(shown_overlap_permille: int | None, share: float) -> bool:
    """Whether at least ``share`` (0-1) of the answer was found in the shown texts; ``False``
    when not measured."""
    return shown_overlap_permille is not None and shown_overlap_permille >= share * 1000


def is_near_duplicate(near_duplicate_score: int | None, similarity: int | float) -> bool:
    """Whether another participant's answer in the setting is at least ``similarity`` (0-100)
    alike; ``False`` when not measured."""
    return near_duplicate_score is not None and near_duplicate_score >= similarity


def is_hidden_then_pasted(away_before_paste_ms: int, away_seconds: int | float) -> bool:
    """Whether a paste followed a time away of at least ``away_seconds`` (s)."""
    return away_before_paste_ms > 0 and away_before_paste_ms >= away_seconds * 1000


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
    thresholds: FlagThresholds = DEFAULT_THRESHOLDS,
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
    thresholds : FlagThresholds
        The study's thresholds of the writing-process flags (:func:`thresholds_from`).
    """
    flags = []
    t = thresholds
    if is_very_short_time(evidence.time_on_task_ms, short_time_flag_seconds):
        flags.append(VERY_SHORT_TIME)
    if is_pasted(evidence.paste_count, evidence.paste_chars):
        flags.append(PASTED)
    if is_long_time_hidden(evidence.hidden_ms, evidence.time_on_task_ms):
        flags.append(LONG_TIME_HIDDEN)
    if identical:
        flags.append(IDENTICAL_ANSWER)
    if is_typed_implausibly_fast(evidence.typed_chars, evidence.typing_ms, t.typed_chars_per_minute_max):
        flags.append(TYPED_IMPLAUSIBLY_FAST)
    if is_inserted_without_typing(
        len(evidence.answer), evidence.dropped_chars, evidence.replaced_chars, t.inserted_without_typing_share
    ):
        flags.append(INSERTED_WITHOUT_TYPING)
    if is_copied_from_shown_texts(evidence.shown_overlap_permille, t.copied_from_shown_texts_share):
        flags.append(COPIED_FROM_SHOWN_TEXTS)
    if is_near_duplicate(evidence.near_duplicate_score, t.near_duplicate_similarity):
        flags.append(NEAR_DUPLICATE)
    if is_hidden_then_pasted(evidence.away_before_paste_ms, t.away_before_paste_seconds):
        flags.append(HIDDEN_THEN_PASTED)
    if include_instruction_check and evidence.instruction_check_passed is False:
        flags.append(FAILED_INSTRUCTION_CHECK)
    return flags


def flags_of_answers(
    answers: Sequence[AnswerEvidence],
    *,
    short_time_flag_seconds: int | float,
    thresholds: FlagThresholds = DEFAULT_THRESHOLDS,
) -> list[list[str]]:
    """The flags of each answer of one population of one kind, in the order given.

    Computes ``identical_answer`` over ``answers`` themselves (:func:`repeated_answers`).
    """
    # Each text normalized once (it is the costly part), then counted: as repeated_answers.
    normalized = [normalize_answer(a.answer) for a in answers]
    seen = Counter(normalized)
    return [
        answer_flags(
            a, short_time_flag_seconds=short_time_flag_seconds, identical=seen[text] > 1, thresholds=thresholds
        )
        for a, text in zip(answers, normalized)
    ]


def participant_flag_counts(
    answers: Iterable[tuple[K, AnswerEvidence]],
    *,
    short_time_flag_seconds: int | float,
    thresholds: FlagThresholds = DEFAULT_THRESHOLDS,
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
        [evidence for _key, evidence in pairs],
        short_time_flag_seconds=short_time_flag_seconds,
        thresholds=thresholds,
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
