"""The study export: tidy CSV files read by ``analysis/`` (columns documented in the README).

The participant column is always a pseudonym (:func:`selectors.participant_pseudonym`); the raw
Prolific ID is never written.
"""
from __future__ import annotations

import json
from pathlib import Path

from spotlight_study.annotation.selectors import final_labels_by_response
from spotlight_study.csvsafe import SafeDictWriter
from spotlight_study.studies.models import Setting, Study

from . import flags as quality_flags
from .models import Participant, TaskResponse
from .selectors import participant_pseudonym, participants_for_export

RESPONSES_COLUMNS = [
    "participant", "setting", "condition", "position", "cell", "answer", "served_at", "answered_at",
    "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", "blur_count", "serve_count",
    "flags", "identified", "other_difference", "no_difference", "excluded", "exclusion_reason",
]
SURVEY_COLUMNS = ["participant", "condition", "item", "response"]
PARTICIPANTS_COLUMNS = [
    "participant", "cell", "cell_plan", "status", "started", "finished", "consented",
    "instruction_check_passed", "training_answer", "comment", "assignment_seed",
    "assignment_counts", "pilot",
]


def _iso(value) -> str:
    return value.isoformat() if value else ""


def _exclusion(p: Participant, training_final=None, final=None) -> str:
    """The reason to exclude a participant's answer, or ``""``.

    In order: ``failed_instruction_check`` (the final label of the training answer decides when
    it exists: the check fails if that label does not have the target identified or excludes it
    as ``failed_instruction_check``; otherwise the automatic keyword check decides);
    ``incomplete``; the answer's own final-label exclusion; an exclusion of the training answer's
    final label (e.g. ``ai_generated``), which applies to all of the participant's answers.
    """
    if training_final is not None:
        check_failed = (
            not training_final.identified
            or training_final.exclusion == "failed_instruction_check"
        )
    else:
        check_failed = p.instruction_check_passed is False
    if check_failed:
        return "failed_instruction_check"
    if p.status != Participant.Status.COMPLETED:
        return "incomplete"
    if final is not None and final.exclusion != "none":
        return final.exclusion
    if training_final is not None and training_final.exclusion not in (
        "none",
        "failed_instruction_check",
    ):
        return training_final.exclusion
    return ""


def _labels(final) -> dict:
    """The 0/1 label columns from a final label (``other_difference``: at least one tag)."""
    if final is None:
        return {"identified": "", "other_difference": "", "no_difference": ""}
    return {
        "identified": int(final.identified),
        "other_difference": int(bool(final.tags)),
        "no_difference": int(final.no_difference),
    }


def _evidence(p: Participant, r: TaskResponse) -> quality_flags.AnswerEvidence:
    return quality_flags.AnswerEvidence(
        answer=r.answer,
        time_on_task_ms=r.time_on_task_ms,
        paste_count=r.paste_count,
        paste_chars=r.paste_chars,
        hidden_ms=r.hidden_ms,
        instruction_check_passed=p.instruction_check_passed,
    )


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
        ``flags`` follow :mod:`.flags`, with ``identical_answer`` computed over the main answers
        of the exported participants. Pilot participants are left out unless ``include_pilot``
        (then ``participants.csv`` marks them with ``pilot`` = 1).
    """
    finals = final_labels_by_response(study=study)
    participants = list(participants_for_export(study=study, include_pilot=include_pilot))
    repeated = quality_flags.repeated_answers(
        r.answer
        for p in participants
        for r in p.responses.all()
        if r.answered_at and r.setting.kind == Setting.Kind.MAIN
    )
    responses, survey, people = [], [], []
    for p in participants:
        pseudonym = participant_pseudonym(study=study, prolific_pid=p.prolific_pid)
        training_final = next(
            (
                finals.get(r.pk)
                for r in p.responses.all()
                if r.setting.kind == Setting.Kind.TRAINING
            ),
            None,
        )
        training_answer = ""
        for r in p.responses.all():
            if r.setting.kind == Setting.Kind.TRAINING:
                training_answer = r.answer
                continue
            if r.answered_at is None:
                continue
            flags = quality_flags.answer_flags(
                _evidence(p, r),
                short_time_flag_seconds=study.short_time_flag_seconds,
                identical=quality_flags.normalize_answer(r.answer) in repeated,
            )
            final = finals.get(r.pk)
            reason = _exclusion(p, training_final, final)
            responses.append(
                {
                    "participant": pseudonym,
                    "setting": r.setting.key,
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
                    "flags": ";".join(flags),
                    **_labels(final),
                    "excluded": 1 if reason else 0,
                    "exclusion_reason": reason,
                }
            )
        for a in sorted(p.survey_answers.all(), key=lambda a: (a.condition, a.item)):
            survey.append(
                {"participant": pseudonym, "condition": a.condition, "item": a.item, "response": a.response}
            )
        people.append(
            {
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
                "assignment_counts": ";".join(f"{k}={v}" for k, v in sorted(p.assignment_counts.items(), key=lambda kv: int(kv[0]))),
                "pilot": int(p.is_pilot),
            }
        )
    return {"responses": responses, "survey": survey, "participants": people}


def results_export(
    *, study: Study, out_dir: str | Path, include_pilot: bool = False
) -> dict[str, Path]:
    """Write ``responses.csv``, ``survey.csv`` and ``participants.csv`` (UTF-8) into ``out_dir``.

    Returns ``{"responses": path, "survey": path, "participants": path}``. Creates ``out_dir`` if
    needed; raises ``OSError`` if it cannot be written. Pilot participants are left out unless
    ``include_pilot`` (see :func:`export_rows`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = export_rows(study=study, include_pilot=include_pilot)
    columns = {
        "responses": RESPONSES_COLUMNS,
        "survey": SURVEY_COLUMNS,
        "participants": PARTICIPANTS_COLUMNS,
    }
    paths = {}
    for name, cols in columns.items():
        path = out / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = SafeDictWriter(fh, fieldnames=cols)
            writer.writeheader()
            writer.writerows(rows[name])
        paths[name] = path
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
