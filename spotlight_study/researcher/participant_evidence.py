"""Reads of the per-participant page: one participant's answers with their writing-process
evidence and flags (docs/answer-quality.md).

The flags are :mod:`spotlight_study.participation.flags`' own, with the study's thresholds and
``identical_answer`` over the participant's population (real or pilot), so the page says what
``responses.csv`` says. The condition is not shown: the page is evidence about how an answer was
written, and a reviewer deciding on an exclusion should not see which condition it came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from spotlight_study.identifiers import is_pseudonym
from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.models import PageAnswer, Participant, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.participation.steps.lookup import step_label
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
class CheckEvidenceRow:
    """One answered try at a check page the study file inserts: the page as the monitor names
    it (``"attention check (between_tasks)"``), the try (1 the first), the chosen option(s) as
    text, whether it passed, the server's time on the page (ms) and what it led to (``passed``,
    ``retry``, ``flag``, ``end``, ``return``)."""

    page: str
    try_number: int
    answer: str
    passed: bool | None
    time_ms: int | None
    outcome: str


@dataclass(frozen=True)
class ParticipantEvidence:
    """The page: the participant's pseudonym, status, pilot mark, answers by position and the
    tries at the study's check pages (in step and try order)."""

    pseudonym: str
    status: str
    is_pilot: bool
    instruction_check_passed: bool | None
    answers: list[AnswerEvidenceRow]
    checks: list[CheckEvidenceRow] = field(default_factory=list)


def participant_evidence(*, study: Study, pseudonym: str) -> ParticipantEvidence | None:
    """The evidence of the participant of ``study`` whose export pseudonym is ``pseudonym``, or
    ``None`` (no such participant, or not a pseudonym at all).

    Four queries: the study's participants (pseudonyms are keyed hashes, so the one asked for
    is found by hashing each PID), the participant's answers, and the texts of its population's
    main answers (for ``identical_answer``), and its tries at check pages.
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
        checks=[
            CheckEvidenceRow(
                page=step_label(a.step, 0, 0),
                try_number=a.try_number,
                answer=a.answer if isinstance(a.answer, str) else " | ".join(a.answer or ()),
                passed=a.passed,
                time_ms=a.time_ms,
                outcome=a.outcome,
            )
            for a in PageAnswer.objects.filter(participant=p, answered_at__isnull=False)
        ],
    )
