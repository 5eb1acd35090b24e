"""The evidence about participants that a review of their submissions shows: each answer with its
quality flags, and the exclusions the annotators' final labels gave.

The final labels belong to the annotation app, which sits above this one; it registers its
source of exclusions when Django starts (``AnnotationConfig.ready``) with
:func:`exclusion_source_register`, so that the Prolific review can ask here without importing
annotation (the two apps are independent). The flags are those of :mod:`.flags`, computed over
the same populations as the export: the real participants' main answers together, their
training answers together.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from spotlight_study.studies.models import Setting, Study

from . import flags as quality_flags
from .models import Participant, TaskResponse

#: ``source(study, participant_ids) -> {participant id: [(setting key, exclusion)]}``: the
#: exclusions (other than ``none``) of the final labels of those participants' answers.
ExclusionSource = Callable[[Study, list[int]], dict[int, list[tuple[str, str]]]]

_SOURCES: list[ExclusionSource] = []


def exclusion_source_register(source: ExclusionSource) -> None:
    """Add a source of final-label exclusions (registering it twice has no effect)."""
    if source not in _SOURCES:
        _SOURCES.append(source)


@dataclass(frozen=True)
class AnswerEvidenceRow:
    """One saved answer as the review shows it: ``setting`` key, ``kind`` (``training`` or
    ``main``), ``position`` (0 the training task), the ``answer`` text and its ``flags`` (keys, in
    :data:`.flags.FLAG_KEYS` order; ``failed_instruction_check`` is the participant's, see
    :attr:`ParticipantEvidence.flags`)."""

    setting: str
    kind: str
    position: int
    answer: str
    flags: tuple[str, ...]


@dataclass(frozen=True)
class ParticipantEvidence:
    """What is known about one participant's answers.

    ``flags``: every flag of any of their answers, in :data:`.flags.FLAG_KEYS` order, with
    ``failed_instruction_check`` when their (last) check failed; ``answers``: their saved
    answers by position (:class:`AnswerEvidenceRow`); ``exclusions``: ``[(setting key,
    exclusion)]`` of the final labels that exclude one of their answers.
    """

    flags: tuple[str, ...] = ()
    answers: tuple[AnswerEvidenceRow, ...] = ()
    exclusions: tuple[tuple[str, str], ...] = field(default=())


_FIELDS = ("participant_id", "position", "setting__key", "setting__kind", *quality_flags.EVIDENCE_FIELDS)


def participants_review_evidence(
    *, study: Study, participant_ids: Iterable[int]
) -> dict[int, ParticipantEvidence]:
    """``{participant id: ParticipantEvidence}`` for ``participant_ids`` (real participants of
    ``study``; an id without saved answers gets empty evidence, with its check flag if failed).

    ``identical_answer`` is computed over all saved answers of the same kind of the study's real
    participants, as in ``responses.csv``. Three queries plus one per registered exclusion
    source.
    """
    wanted = set(participant_ids)
    if not wanted:
        return {}
    rows = list(
        TaskResponse.objects.filter(
            participant__study=study, participant__is_pilot=False, answered_at__isnull=False
        )
        .order_by("participant_id", "position", "pk")
        .values_list(*_FIELDS, named=True)
    )
    per_answer: dict[int, list[AnswerEvidenceRow]] = {pid: [] for pid in wanted}
    for kind in (Setting.Kind.TRAINING, Setting.Kind.MAIN):
        population = [r for r in rows if r.setting__kind == kind]
        computed = quality_flags.flags_of_answers(
            [quality_flags.evidence_of(r) for r in population],
            short_time_flag_seconds=study.short_time_flag_seconds,
        )
        for r, answer_flags in zip(population, computed):
            if r.participant_id in wanted:
                per_answer[r.participant_id].append(
                    AnswerEvidenceRow(
                        setting=r.setting__key, kind=str(kind), position=r.position,
                        answer=r.answer, flags=tuple(answer_flags),
                    )
                )
    failed = set(
        Participant.objects.filter(pk__in=wanted, instruction_check_passed=False).values_list("pk", flat=True)
    )
    exclusions: dict[int, list[tuple[str, str]]] = {pid: [] for pid in wanted}
    for source in _SOURCES:
        for pid, found in source(study, sorted(wanted)).items():
            if pid in exclusions:
                exclusions[pid].extend(found)
    out = {}
    for pid in wanted:
        answers = sorted(per_answer[pid], key=lambda a: a.position)
        present = {f for a in answers for f in a.flags}
        if pid in failed:
            present.add(quality_flags.FAILED_INSTRUCTION_CHECK)
        out[pid] = ParticipantEvidence(
            flags=tuple(k for k in quality_flags.FLAG_KEYS if k in present),
            answers=tuple(answers),
            exclusions=tuple(exclusions[pid]),
        )
    return out
