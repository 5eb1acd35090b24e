"""Reads of the study export: participants, answers, survey answers and final labels as plain
rows, four queries whatever the number of participants.

A study of 10,000 participants has some 30,000 answers and 100,000 survey answers; as model
instances (``prefetch_related``) they cost about 15 s to build, as ``values_list`` rows about a
tenth of that. The rows are named tuples, read like the models (``p.status``, ``r.answer``), so
:mod:`spotlight_study.results.exports` and :mod:`spotlight_study.participation.flags` take them
as they would take the models.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Q

from spotlight_study.annotation.models import FinalLabel
from spotlight_study.participation.models import (
    InstructionCheckAttempt,
    Participant,
    SurveyAnswer,
    TaskResponse,
)
from spotlight_study.studies.models import Study

#: The participant fields the export reads (``pk`` first).
PARTICIPANT_FIELDS = (
    "pk", "prolific_pid", "cell_index", "cell_plan", "status", "started_at", "finished_at",
    "consented_at", "instruction_check_passed", "comment", "assignment_seed",
    "assignment_counts", "is_pilot",
)
#: The answer fields the export reads (a superset of
#: :data:`~spotlight_study.participation.flags.EVIDENCE_FIELDS`), with the setting's key and kind.
RESPONSE_FIELDS = (
    "pk", "participant_id", "condition", "position", "answer", "served_at", "answered_at",
    "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", "blur_count", "serve_count",
    "typed_chars", "dropped_chars", "replaced_chars", "insertions", "deletions", "typing_ms",
    "largest_insert_chars", "away_before_paste_ms", "shown_overlap_permille",
    "near_duplicate_score", "setting__key", "setting__kind",
)


@dataclass(frozen=True)
class ExportData:
    """What the export reads, as plain rows.

    ``participants``: rows with :data:`PARTICIPANT_FIELDS`, oldest first (``started_at``, pk);
    ``responses``: ``{participant pk: [answer rows]}`` by position, each with
    :data:`RESPONSE_FIELDS`; ``survey``: ``{participant pk:
    [survey rows]}`` (``condition``, ``item``, ``response``, ``value``) sorted by condition, then item;
    ``finals``: ``{task response pk: final label row}`` (``source``, ``identified``, ``tags``,
    ``no_difference``, ``exclusion``, ``machine_model``, ``surface_difference``, and a declared
    codebook's ``values`` and ``notes``); ``attempts``: ``{participant pk:
    [earlier attempts at the instruction check]}`` (``attempt``, ``answer``, ``passed``), by
    number (``instruction_check_attempts: 2``; the last attempt is the training response).
    """

    participants: list
    responses: dict[int, list]
    survey: dict[int, list]
    finals: dict[int, object]
    attempts: dict[int, list] = field(default_factory=dict)


def export_data(*, study: Study, include_pilot: bool = False) -> ExportData:
    """The :class:`ExportData` of ``study``; pilot participants (and the final labels of the
    pilot annotation round) only with ``include_pilot``."""
    pilot = Q() if include_pilot else Q(is_pilot=False)
    answer_pilot = Q() if include_pilot else Q(participant__is_pilot=False)
    participants = list(
        Participant.objects.filter(pilot, study=study)
        .order_by("started_at", "pk")
        .values_list(*PARTICIPANT_FIELDS, named=True)
    )
    responses: dict[int, list] = defaultdict(list)
    for r in (
        TaskResponse.objects.filter(answer_pilot, participant__study=study)
        .order_by("participant_id", "position", "pk")
        .values_list(*RESPONSE_FIELDS, named=True)
    ):
        responses[r.participant_id].append(r)
    survey: dict[int, list] = defaultdict(list)
    for a in (
        SurveyAnswer.objects.filter(answer_pilot, participant__study=study)
        .order_by("participant_id", "condition", "item", "pk")
        .values_list("participant_id", "condition", "item", "response", "value", named=True)
    ):
        survey[a.participant_id].append(a)
    # A real answer's labels come from the real items only; the pilot annotation round's final
    # labels reach only pilot participants' rows, and only with include_pilot.
    item_pilot = Q() if include_pilot else Q(item__is_pilot=False)
    finals = {
        f.item__response_id: f
        for f in FinalLabel.objects.filter(item_pilot, item__study=study).values_list(
            "item__response_id", "source", "identified", "tags", "no_difference", "exclusion",
            "machine_model", "surface_difference", "values", "notes", named=True,
        )
    }
    attempts: dict[int, list] = defaultdict(list)
    for a in (
        InstructionCheckAttempt.objects.filter(answer_pilot, participant__study=study)
        .order_by("participant_id", "attempt")
        .values_list("participant_id", "attempt", "answer", "passed", named=True)
    ):
        attempts[a.participant_id].append(a)
    return ExportData(
        participants=participants, responses=responses, survey=survey, finals=finals, attempts=attempts
    )
