"""Reads of the per-participant page: one participant's answers with their writing-process
evidence and flags (docs/answer-quality.md).

The flags are :mod:`spotlight_study.participation.flags`' own, with the study's thresholds and
``identical_answer`` over the participant's population (real or pilot), so the page says what
``responses.csv`` says. The condition is not shown: the page is evidence about how an answer was
written, and a reviewer deciding on an exclusion should not see which condition it came from.
"""
from __future__ import annotations

from dataclasses import dataclass

from spotlight_study.identifiers import is_pseudonym
from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.studies.models import Setting, Study


@dataclass(frozen=True)
class AnswerEvidenceRow:
    """One saved answer as the page shows it.

    Times are in ms as stored (``time_on_task_ms`` measured on the server); ``chars_per_minute``
    is typed characters per minute of active typing (``None`` without typing time);
    ``shown_overlap_percent`` and ``near_duplicate_score`` are ``None`` when not measured;
    ``flags`` are labels in ``FLAG_KEYS`` order.
    """

    setting: str
    position: int
    is_training: bool
    answer: str
    time_on_task_ms: int | None
    response: TaskResponse
    chars_per_minute: int | None
    shown_overlap_percent: float | None
    flags: tuple[str, ...]


@dataclass(frozen=True)
class ParticipantEvidence:
    """The page: the participant's pseudonym, status, pilot mark and answers by position."""

    pseudonym: str
    status: str
    is_pilot: bool
    instruction_check_passed: bool | None
    answers: list[AnswerEvidenceRow]


def participant_evidence(*, study: Study, pseudonym: str) -> ParticipantEvidence | None:
    """The evidence of the participant of ``study`` whose export pseudonym is ``pseudonym``, or
    ``None`` (no such participant, or not a pseudonym at all).

    Three queries: the study's participants (pseudonyms are keyed hashes, so the one asked for
    is found by hashing each PID), the participant's answers, and the texts of its population's
    main answers (for ``identical_answer``).
    """
    if not is_pseudonym(pseudonym):
        return None
    found = next(
        (
            pk
            for pk, pid in Participant.objects.filter(study=study).values_list("pk", "prolific_pid").iterator()
            if participant_pseudonym(study=study, prolific_pid=pid) == pseudonym
        ),
        None,
    )
    if found is None:
        return None
    p = Participant.objects.get(pk=found)
    responses = list(
        TaskResponse.objects.filter(participant=p, answered_at__isnull=False)
        .select_related("setting")
        .order_by("position")
    )
    repeated = quality_flags.repeated_answers(
        TaskResponse.objects.filter(
            participant__study=study,
            participant__is_pilot=p.is_pilot,
            setting__kind=Setting.Kind.MAIN,
            answered_at__isnull=False,
        ).values_list("answer", flat=True)
    )
    thresholds = quality_flags.thresholds_of(study)
    rows = []
    for r in responses:
        training = r.setting.kind == Setting.Kind.TRAINING
        keys = quality_flags.answer_flags(
            quality_flags.evidence_of(r, instruction_check_passed=p.instruction_check_passed),
            short_time_flag_seconds=study.short_time_flag_seconds,
            identical=not training and quality_flags.normalize_answer(r.answer) in repeated,
            thresholds=thresholds,
        )
        rows.append(
            AnswerEvidenceRow(
                setting=r.setting.key,
                position=r.position,
                is_training=training,
                answer=r.answer,
                time_on_task_ms=r.time_on_task_ms,
                response=r,
                chars_per_minute=round(r.typed_chars * 60_000 / r.typing_ms) if r.typing_ms else None,
                shown_overlap_percent=None
                if r.shown_overlap_permille is None
                else r.shown_overlap_permille / 10,
                flags=tuple(quality_flags.FLAG_LABELS[k] for k in keys),
            )
        )
    return ParticipantEvidence(
        pseudonym=pseudonym,
        status=p.get_status_display(),
        is_pilot=p.is_pilot,
        instruction_check_passed=p.instruction_check_passed,
        answers=rows,
    )
