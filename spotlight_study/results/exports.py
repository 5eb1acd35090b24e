"""The study export: tidy CSV files read by ``analysis/`` (columns documented in docs/export.md).

Joins the participants' answers (:mod:`spotlight_study.participation`) with their final labels
(:mod:`spotlight_study.annotation`), which is why it lives in this app above both. The
participant column is always a pseudonym
(:func:`~spotlight_study.participation.selectors.participant_pseudonym`); the raw Prolific ID is
never written.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from spotlight_study.annotation.codebook_exports import (
    codebook_cells,
    codebook_columns,
    export_fields,
    outcome_success,
)
from spotlight_study.csvsafe import neutralize
from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.participation.steps.checks import failed_checks
from spotlight_study.participation.steps.lookup import export_cells, export_columns
from spotlight_study.prolific.payloads import DEMOGRAPHIC_FIELDS
from spotlight_study.prolific.selectors import demographics_by_pseudonym
from spotlight_study.results.selectors import export_data
from spotlight_study.results.survey_columns import survey_items_write, survey_response
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.schema_codebook import tags_field_key

#: The demographic columns of ``participants.csv``, from Prolific's demographic export
#: (``manage.py prolific_demographics``); empty where not fetched or not answered.
DEMOGRAPHIC_COLUMNS = list(DEMOGRAPHIC_FIELDS)
#: The writing-process evidence of an answer (participation/models.py, TaskResponse), as stored.
WRITING_COLUMNS = [
    "typed_chars", "dropped_chars", "replaced_chars", "insertions", "deletions", "typing_ms",
    "largest_insert_chars", "away_before_paste_ms", "shown_overlap_permille",
    "near_duplicate_score",
]
RESPONSES_COLUMNS = [
    "participant", "setting", "condition", "position", "cell", "answer", "served_at", "answered_at",
    "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", "blur_count", "serve_count",
    *WRITING_COLUMNS, "flags", "identified", "other_difference", "no_difference", "excluded", "exclusion_reason",
    "label_source", "is_pilot",
    # The final label's surface difference (0/1) and its tags (";"-joined), issue 37; a study's
    # declared codebook adds its own columns after these (responses_columns).
    "surface_difference", "tags",
]
SURVEY_COLUMNS = ["participant", "condition", "item", "response", "is_pilot"]
PARTICIPANTS_COLUMNS = [
    "participant", "cell", "cell_plan", "status", "started", "finished", "consented",
    "instruction_check_passed", "training_answer", "instruction_check_attempts",
    "first_attempt_answer", "first_attempt_passed", "comment", "assignment_seed",
    "assignment_counts", "pilot",
    *DEMOGRAPHIC_COLUMNS,
]
#: Prefix of the columns of answers to screeners requested in Prolific's demographic export.
SCREENER_PREFIX = "screener_"


def _iso(value) -> str:
    return value.isoformat() if value else ""


def _exclusion(
    p: Participant, training_final=None, final=None, training_passed=None, failed_page: bool = False
) -> str:
    """The reason to exclude a participant's answer, or ``""``.

    In order: ``failed_instruction_check`` (the final label of the training answer decides when
    it exists: the check fails if that label does not have the target identified or excludes it
    as ``failed_instruction_check``; otherwise the automatic keyword check decides);
    ``failed_check_page`` (``failed_page``: a check page of the study file failed at its last
    try, ``participation.steps.checks.failed_checks``); ``incomplete``; the answer's own final-label exclusion; an exclusion of the training answer's
    final label (e.g. ``ai_generated``), which applies to all of the participant's answers.

    Under a declared codebook ``training_passed`` replaces ``identified``: ``True``/``False``
    the training label's outcome as success (yes/no or ``codebook.success``), ``""`` when the
    outcome is no proportion (the automatic check and the label's exclusion decide).
    """
    if training_passed is not None:  # a declared codebook (_training_passed)
        check_failed = training_passed is False or (
            training_passed == "" and p.instruction_check_passed is False
        ) or training_final.exclusion == "failed_instruction_check"
    elif training_final is not None and training_final.identified is not None:
        check_failed = (
            not training_final.identified
            or training_final.exclusion == "failed_instruction_check"
        )
    else:
        check_failed = p.instruction_check_passed is False
    if check_failed:
        return "failed_instruction_check"
    if failed_page:
        return "failed_check_page"
    if p.status != Participant.Status.COMPLETED:
        return "incomplete"
    if final is not None and final.exclusion not in ("none", None):
        return final.exclusion
    if training_final is not None and training_final.exclusion not in (
        "none",
        "failed_instruction_check",
        None,  # an accepted machine label without the exclusion field
    ):
        return training_final.exclusion
    return ""


def _labels(final) -> dict:
    """The 0/1 label columns from a final label (``other_difference``: at least one tag), and
    ``label_source``: ``agreement``, ``adjudication`` or ``machine:llm:<model>`` (the machine
    coder's label accepted by the researcher). A field an accepted machine label does not
    cover is empty, as without a final label."""
    if final is None:
        return {"identified": "", "other_difference": "", "no_difference": "", "label_source": "",
                "surface_difference": "", "tags": ""}


    def bit(value) -> int | str:
        return "" if value is None else int(bool(value))

    machine = final.source == "machine"
    return {
        "identified": bit(final.identified),
        "other_difference": bit(final.tags),
        "no_difference": bit(final.no_difference),
        "label_source": f"machine:llm:{final.machine_model}" if machine else final.source,
        "surface_difference": bit(final.surface_difference),
        "tags": "" if final.tags is None else ";".join(sorted(final.tags)),
    }


def responses_columns(study: Study) -> list[str]:
    """``responses.csv``'s columns: :data:`RESPONSES_COLUMNS`, then a declared codebook's
    (one per field; a multi_choice field's joined column and a 0/1 column per option). A
    codebook column named like one of :data:`RESPONSES_COLUMNS` (the ``tags`` field that takes
    the settings' tags) is that column, not a second one of the same name."""
    return [*RESPONSES_COLUMNS, *(c for c in codebook_columns(export_fields(study))
                                  if c not in RESPONSES_COLUMNS)]


def _codebook_labels(study: Study, fields: list[dict], final) -> dict:
    """Under a declared codebook: its columns, ``identified`` as the outcome's success (1/0, or
    empty when the outcome is not binary), ``other_difference`` whether the field taking tags
    has any; the default codebook's other columns stay empty unless the codebook has a field
    of that name (``tags``), whose cell they then hold."""
    cells = codebook_cells(fields, final)
    tags_key = tags_field_key(study.annotation_codebook)
    defaults = {k: "" for k in ("no_difference", "surface_difference", "tags") if k not in cells}
    cells.update(
        identified=outcome_success(study, final),
        other_difference="" if final is None or not tags_key else int(bool(cells[tags_key])),
        **defaults,
    )
    return cells


def export_rows(*, study: Study, include_pilot: bool = False) -> dict[str, list[dict]]:
    """Rows of the three export files.

    Returns
    -------
    dict
        ``{"responses": [...], "survey": [...], "participants": [...]}``, each a list of dicts
        keyed by the ``*_COLUMNS`` of this module. ``responses`` has one row per participant x
        main setting with a saved answer; ``time_on_task_ms`` is in ms. Label columns
        (``identified``, ``other_difference``, ``no_difference``) come from the answer's final
        label (agreed or adjudicated blind annotation) and are empty until it exists.
        ``excluded``/``exclusion_reason`` follow :func:`_exclusion`: before annotation they are
        pre-filled for incomplete participants and failed (automatic) instruction checks.
        ``flags`` follow :mod:`spotlight_study.participation.flags`, with ``identical_answer``
        computed over the main answers of the exported participants. Pilot participants are
        left out unless ``include_pilot``
        (then ``participants.csv`` marks them with ``pilot`` = 1, and ``responses`` and
        ``survey`` rows with ``is_pilot`` = 1; a pilot answer's labels are the final labels of the
        pilot annotation round, a real answer's never are).
    """
    data = export_data(study=study, include_pilot=include_pilot)
    finals = data.finals
    repeated = quality_flags.repeated_answers(
        r.answer
        for answers in data.responses.values()
        for r in answers
        if r.answered_at and r.setting__kind == Setting.Kind.MAIN
    )
    demographics = demographics_by_pseudonym(study=study)
    fields = export_fields(study)
    responses, survey, people = [], [], []
    # The registered steps' own columns (none for the built-in steps): one query per such step.
    step_cells = export_cells([p.pk for p in data.participants]) if export_columns() else {}
    # A failed check page excludes the participant's answers (the plan's failed_check_page).
    failed_pages = set(failed_checks([p.pk for p in data.participants]))
    for p in data.participants:
        pseudonym = participant_pseudonym(study=study, prolific_pid=p.prolific_pid)
        answers = data.responses.get(p.pk, ())
        training = [r for r in answers if r.setting__kind == Setting.Kind.TRAINING]
        training_final = finals.get(training[0].pk) if training else None
        for r in answers:
            if r.setting__kind == Setting.Kind.TRAINING or r.answered_at is None:
                continue
            final = finals.get(r.pk)
            passed = None
            if fields and training_final is not None:
                success = outcome_success(study, training_final)
                passed = "" if success == "" else bool(success)
            row = _response_row(
                r, p, pseudonym=pseudonym, study=study, repeated=repeated, final=final,
                reason=_exclusion(p, training_final, final, passed, failed_page=p.pk in failed_pages),
            )
            if fields:
                row.update(_codebook_labels(study, fields, final))
            responses.append(row)
        survey += _survey_rows(data.survey.get(p.pk, ()), pseudonym, int(p.is_pilot))
        person = _participant_row(p, pseudonym, training[-1].answer if training else "")
        person.update(_attempt_cells(data.attempts.get(p.pk, ()), any(r.answered_at for r in training)))
        person.update(_demographic_cells(demographics.get(pseudonym)))
        person.update(step_cells.get(p.pk, ()))
        people.append(person)
    return {"responses": responses, "survey": survey, "participants": people}


def _response_row(
    r, p: Participant, *, pseudonym: str, study: Study, repeated: set, final, reason: str
) -> dict:
    """The ``responses.csv`` row of the main answer ``r`` of ``p``.

    ``repeated`` holds the normalized answers given more than once in the export (the
    ``identical_answer`` flag); ``final`` is the answer's final label or ``None``; ``reason``
    the exclusion reason of :func:`_exclusion` (``""`` when kept).
    """
    flags = quality_flags.answer_flags(
        quality_flags.evidence_of(r, instruction_check_passed=p.instruction_check_passed),
        short_time_flag_seconds=study.short_time_flag_seconds,
        identical=quality_flags.normalize_answer(r.answer) in repeated,
        thresholds=quality_flags.thresholds_of(study),
    )
    return {
        "participant": pseudonym,
        "setting": r.setting__key,
        "condition": r.condition,
        "position": r.position,
        "cell": p.cell_index,
        "answer": r.answer,
        "served_at": _iso(r.served_at),
        "answered_at": _iso(r.answered_at),
        "time_on_task_ms": r.time_on_task_ms,
        "paste_count": r.paste_count,
        "paste_chars": r.paste_chars,
        "hidden_ms": r.hidden_ms,
        "blur_count": r.blur_count,
        "serve_count": r.serve_count,
        **{name: "" if getattr(r, name) is None else getattr(r, name) for name in WRITING_COLUMNS},
        "flags": ";".join(flags),
        **_labels(final),
        "excluded": 1 if reason else 0,
        "exclusion_reason": reason,
        "is_pilot": int(p.is_pilot),
    }


def _survey_rows(answers, pseudonym: str, is_pilot: int) -> list[dict]:
    """The ``survey.csv`` rows of one participant's survey ``answers`` (sorted by condition and
    item, as :func:`~.selectors.export_data` gives them); ``is_pilot`` 1 for a pilot. A typed
    item's answer is written by :func:`.survey_columns.survey_response`."""
    return [
        {
            "participant": pseudonym, "condition": a.condition, "item": a.item,
            "response": survey_response(a.response, a.value), "is_pilot": is_pilot,
        }
        for a in answers
    ]


def _participant_row(p: Participant, pseudonym: str, training_answer: str) -> dict:
    """The ``participants.csv`` row of ``p``; ``assignment_counts`` sorted by cell number."""
    counts = sorted(p.assignment_counts.items(), key=lambda kv: int(kv[0]))
    return {
        "participant": pseudonym,
        "cell": p.cell_index,
        "cell_plan": " > ".join(f"{t['setting']}:{t['condition']}" for t in p.cell_plan),
        "status": p.status,
        "started": _iso(p.started_at),
        "finished": _iso(p.finished_at),
        "consented": _iso(p.consented_at),
        "instruction_check_passed": ""
        if p.instruction_check_passed is None
        else int(p.instruction_check_passed),
        "training_answer": training_answer,
        "comment": p.comment,
        "assignment_seed": p.assignment_seed,
        "assignment_counts": ";".join(f"{k}={v}" for k, v in counts),
        "pilot": int(p.is_pilot),
    }


def _attempt_cells(earlier, answered: bool) -> dict:
    """The instruction-check attempt cells of one participant: ``instruction_check_attempts``
    (the number of training answers given: the ``earlier`` kept attempts plus the last one, 0
    before the training task), and the first attempt's answer and result (0/1) when a later
    attempt replaced it (``instruction_check_attempts: 2``), else empty."""
    first = earlier[0] if earlier else None
    return {
        "instruction_check_attempts": len(earlier) + int(answered),
        "first_attempt_answer": first.answer if first else "",
        "first_attempt_passed": int(first.passed) if first else "",
    }


def _demographic_cells(d: dict | None) -> dict:
    """The demographic cells of one participant (empty without a stored row), with each extra
    column Prolific returned as ``screener_<name>``."""
    if d is None:
        return {c: "" for c in DEMOGRAPHIC_COLUMNS}
    cells = {c: "" if d[c] is None else d[c] for c in DEMOGRAPHIC_COLUMNS}
    cells.update({f"{SCREENER_PREFIX}{k}": v for k, v in sorted(d["extra"].items())})
    return cells


def participant_columns(people: Iterable[Mapping], study: Study | None = None) -> list[str]:
    """The columns of ``participants.csv`` for these rows: :data:`PARTICIPANTS_COLUMNS`, the
    registered steps' own columns (``StepSpec.export_columns``, in flow order; none for the
    built-in steps; with ``study``, only the steps it has, e.g. its check pages), then the
    ``screener_*`` columns any row has (sorted)."""
    extra = sorted({k for row in people for k in row if k.startswith(SCREENER_PREFIX)})
    return [*PARTICIPANTS_COLUMNS, *export_columns(study), *extra]


def csv_write(fh, columns: list[str], rows: Iterable[Mapping]) -> None:
    """Write the header ``columns``, then each row's cells in that order, to the text file
    ``fh`` (opened with ``newline=""``): the bytes :class:`~spotlight_study.csvsafe.SafeDictWriter`
    writes (excel dialect, text cells neutralized, a missing cell empty), at a third of its
    cost, which counts with 100,000 survey rows."""
    writer = csv.writer(fh)
    writer.writerow(columns)
    writer.writerows([neutralize(row.get(c, "")) for c in columns] for row in rows)


def results_export(
    *, study: Study, out_dir: str | Path, include_pilot: bool = False
) -> dict[str, Path]:
    """Write ``responses.csv``, ``survey.csv`` and ``participants.csv`` (UTF-8) into ``out_dir``,
    and ``survey_items.json`` (:func:`.survey_columns.survey_items_document`).

    Returns ``{"responses": path, "survey": path, "participants": path, "survey_items": path}``. Creates ``out_dir`` if
    needed; raises ``OSError`` if it cannot be written. Pilot participants are left out unless
    ``include_pilot`` (see :func:`export_rows`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = export_rows(study=study, include_pilot=include_pilot)
    columns = {
        "responses": responses_columns(study),
        "survey": SURVEY_COLUMNS,
        "participants": participant_columns(rows["participants"], study),
    }
    paths = {}
    for name, cols in columns.items():
        path = out / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            csv_write(fh, cols, rows[name])
        paths[name] = path
    # Each survey item's type and words, for the analysis (next to survey.csv, never in it).
    paths["survey_items"] = survey_items_write(study=study, out_dir=out)
    return paths


def results_export_jsonl(
    *, study: Study, out_dir: str | Path, include_pilot: bool = False
) -> dict[str, Path]:
    """Write ``responses.jsonl``, ``survey.jsonl`` and ``participants.jsonl`` (UTF-8) into
    ``out_dir``: the same rows as the CSV files, with the raw text.

    The CSV files are neutralized against spreadsheet formulas (:mod:`spotlight_study.csvsafe`);
    these copies are not. One JSON object per line, keyed by the ``*_COLUMNS`` of this module;
    numbers stay numbers, and a value that the CSV writes as an empty cell is ``null`` or ``""``.
    Returns ``{name: path}``; raises ``OSError`` if ``out_dir`` cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = export_rows(study=study, include_pilot=include_pilot)
    paths = {}
    for name in ("responses", "survey", "participants"):
        path = out / f"{name}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows[name]:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        paths[name] = path
    return paths
