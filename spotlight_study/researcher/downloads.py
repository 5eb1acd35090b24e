"""The web download of a study's data: one zip with the export, a wide file and a README.

``<slug>-export.zip`` holds

- ``responses.csv``, ``survey.csv``, ``participants.csv``: exactly what ``manage.py
  export_results`` writes (same rows, columns and formula-safe cells);
- ``participants_wide.csv``: one row per participant with their answers, final labels, times and
  survey answers side by side (oTree's "wide" format), built from the same rows;
- ``README.txt``: every column of every file, with its meaning.

Everything comes from one call of :func:`~spotlight_study.results.exports.export_rows`, so
the four CSV files always agree. The zip is built in memory (a study of 10,000 participants gives
a few MB).
"""
from __future__ import annotations

import io
import zipfile
from collections import defaultdict
from datetime import datetime

from django.utils import timezone

from spotlight_study.annotation.codebook_exports import column_meanings, export_fields
from spotlight_study.results.survey_columns import (
    has_typed_items, option_column, option_columns, wide_option_cells,
)
from spotlight_study.results.exports import (
    PARTICIPANTS_COLUMNS,
    SURVEY_COLUMNS,
    SCREENER_PREFIX,
    csv_write,
    export_rows,
    responses_columns,
    participant_columns,
)
from spotlight_study.studies.models import Setting, Study

#: Per main setting in the wide file: ``<setting key>_<suffix>``, from these columns of
#: ``responses.csv`` (``time_on_task_s`` is ``time_on_task_ms`` / 1000).
WIDE_SETTING_COLUMNS = (
    ("condition", "condition"),
    ("position", "position"),
    ("answer", "answer"),
    ("time_on_task_s", "time_on_task_ms"),
    ("flags", "flags"),
    ("identified", "identified"),
    ("other_difference", "other_difference"),
    ("no_difference", "no_difference"),
    ("excluded", "excluded"),
    ("exclusion_reason", "exclusion_reason"),
)
#: Participant columns of the wide file, in order (those of ``participants.csv`` + duration).
WIDE_PARTICIPANT_COLUMNS = [*PARTICIPANTS_COLUMNS, "duration_s"]

_RESPONSES_DOC = {
    "participant": "pseudonym of the participant (p_ + 16 hex digits; never the Prolific ID)",
    "setting": "key of the main setting",
    "condition": "condition of the task: no_pattern, pattern or pattern_with_distractors",
    "position": "1-based position of the task in the participant's order",
    "cell": "counterbalancing cell index",
    "answer": "the text the participant wrote",
    "served_at": "ISO 8601 UTC: first serving of the task page",
    "answered_at": "ISO 8601 UTC: saving of the answer",
    "time_on_task_ms": "answered_at - served_at in milliseconds (server clock)",
    "paste_count": "paste events in the answer box (browser-reported)",
    "paste_chars": "characters pasted into the answer box (browser-reported)",
    "hidden_ms": "milliseconds the tab was hidden while on the page (browser-reported)",
    "blur_count": "times the window lost focus (browser-reported)",
    "serve_count": "times the page was served (refreshes, second tabs)",
    "typed_chars": "characters typed key by key (input events; browser-reported)",
    "dropped_chars": "characters dragged and dropped into the answer box (browser-reported)",
    "replaced_chars": "characters inserted by autocomplete, replacement, dictation or a script "
    "(browser-reported)",
    "insertions": "insertions into the answer box (browser-reported; 0: no JavaScript)",
    "deletions": "deletions in the answer box (browser-reported)",
    "typing_ms": "active typing time in ms, pauses over 2 s left out (browser-reported)",
    "largest_insert_chars": "the largest block inserted at once, in characters (browser-reported)",
    "away_before_paste_ms": "longest time away (tab hidden or window blurred) that ended at most "
    "30 s before a paste, ms (browser-reported)",
    "shown_overlap_permille": "share of the answer found in the shown texts, per mille (server; "
    "empty: not measured)",
    "near_duplicate_score": "highest similarity 0-100 to another participant's answer in the same "
    "setting (server, rapidfuzz; empty: not measured)",
    "flags": "quality flags, ;-separated, in this order: very_short_time, pasted, "
    "long_time_hidden, identical_answer, typed_implausibly_fast, inserted_without_typing, "
    "copied_from_shown_texts, near_duplicate, hidden_then_pasted, failed_instruction_check "
    "(evidence, not a verdict: docs/answer-quality.md)",
    "identified": "0/1 from the answer's final annotation label: target difference identified; "
    "empty until a final label exists",
    "other_difference": "0/1 from the final label: at least one tag (another difference named); "
    "empty until a final label exists",
    "no_difference": "0/1 from the final label: the answer says there is no difference; "
    "empty until a final label exists",
    "excluded": "0/1; 1 when exclusion_reason is set",
    "exclusion_reason": "failed_instruction_check, incomplete, or an exclusion from annotation "
    "(copy_pasted, ai_generated, duplicate, other); empty if included",
    "label_source": "where the final label comes from: agreement, adjudication, or "
    "machine:llm:<model> (a machine label accepted by the researcher); empty until labelled",
    "is_pilot": "1 for an answer of a simulated pilot participant (its labels come from the "
    "pilot annotation round), else 0",
    "surface_difference": "0/1 from the final label: the obvious surface difference was named; "
    "empty until a final label exists",
    "tags": "the final label's tags (other differences named), ;-separated; empty until a "
    "final label exists or when it has none",
}
_SURVEY_DOC = {
    "participant": "pseudonym of the participant",
    "condition": "condition the item is about (no_pattern, pattern, pattern_with_distractors) "
    "or background",
    "item": "survey item key (ease, effort, confidence, llm_use, prompt_engineering, programming, "
    "data_analysis or the study's own keys)",
    "response": "1-5; Likert items from Strongly disagree = 1 to Strongly agree = 5, background "
    "items from Never = 1 to Daily = 5",
    "is_pilot": "1 for an answer of a simulated pilot participant, else 0",
}
_TYPED_RESPONSE_DOC = (
    "the answer by the item's type (survey_items.json): an item without a type 1-5 as above; "
    "likert the point, 1 = its first label; choice the option as written; multi_choice the "
    "options checked, joined by ';'; number the number; text the text"
)
_PARTICIPANTS_DOC = {
    "participant": "pseudonym of the participant",
    "cell": "counterbalancing cell index",
    "cell_plan": "the participant's main tasks in order, setting:condition joined by ' > '",
    "status": "in_progress, completed, failed_check, no_consent, returned, timed_out, rejected "
    "or ended_by_researcher (a stalled participant the researcher ended)",
    "started": "ISO 8601 UTC: arrival",
    "finished": "ISO 8601 UTC: end of the session (empty while in progress or if left)",
    "consented": "ISO 8601 UTC: consent given (empty if not)",
    "instruction_check_passed": "0/1 from the automatic keyword check of the (last) training "
    "answer; empty if not reached",
    "training_answer": "the training answer's text (the last attempt's)",
    "instruction_check_attempts": "training answers given: 0 before the training task, 1, or 2 "
    "when a failed first attempt was followed by a second (instruction_check_attempts: 2)",
    "first_attempt_answer": "the first training answer when a second attempt replaced it, else empty",
    "first_attempt_passed": "0/1: the first attempt's automatic check, when a second replaced it, "
    "else empty",
    "comment": "the participant's free comment at the end of the survey",
    "assignment_seed": "seed of the random tie-break of the balanced assignment",
    "assignment_counts": "per-cell counts the assignment saw, cell=count;...",
    "pilot": "1 for a simulated pilot participant, else 0",
    # From Prolific's demographic export (manage.py prolific_demographics), joined by pseudonym;
    # empty when not fetched, not answered, or expired on Prolific (DATA_EXPIRED).
    "age": "age in years (Prolific demographic export); empty if not fetched or not given",
    "sex": "sex as recorded on legal/official documents, as Prolific reports it (Female, Male, "
    "...); empty if not fetched or not given",
    "country_of_residence": "current country of residence (Prolific demographic export)",
    "first_language": "first language (Prolific demographic export, column Language)",
    "nationality": "nationality (Prolific demographic export)",
    "country_of_birth": "country of birth (Prolific demographic export)",
    "ethnicity": "simplified ethnicity (Prolific demographic export, Ethnicity simplified)",
    "student_status": "student status (Prolific demographic export)",
    "employment_status": "employment status (Prolific demographic export)",
}
_WIDE_SETTING_DOC = {
    "condition": "condition of this setting's task",
    "position": "1-based position of this setting's task in the participant's order",
    "answer": "the participant's answer in this setting",
    "time_on_task_s": "time on this task in seconds (time_on_task_ms / 1000)",
    "flags": "quality flags of this answer, ;-separated (as in responses.csv)",
    "identified": "0/1 final label: target difference identified (empty until labelled)",
    "other_difference": "0/1 final label: another difference named (empty until labelled)",
    "no_difference": "0/1 final label: says there is no difference (empty until labelled)",
    "excluded": "0/1; 1 when this answer is excluded",
    "exclusion_reason": "why this answer is excluded (as in responses.csv)",
}


def _setting_keys(study: Study, responses: list[dict]) -> list[str]:
    """The main setting keys in the study's order, then any others found in the rows."""
    keys = [s.key for s in study.settings.all() if s.kind == Setting.Kind.MAIN]
    keys += sorted({r["setting"] for r in responses} - set(keys))
    return keys


def _seconds(ms) -> float | str:
    return "" if ms in (None, "") else round(ms / 1000, 3)


def wide_rows(*, study: Study, rows: dict[str, list[dict]]) -> tuple[list[str], list[dict]]:
    """The ``participants_wide.csv`` columns and rows from the rows of ``export_rows``.

    One row per participant (in the order of ``participants.csv``): the participant columns,
    ``duration_s`` (finished - started in seconds, empty if not finished), then for each main
    setting ``<key>_<suffix>`` for every suffix of :data:`WIDE_SETTING_COLUMNS` (empty where the
    participant has no saved answer in the setting), then ``survey_<condition>_<item>`` for every
    survey item answered by anyone (sorted by condition, then item).
    """
    settings = _setting_keys(study, rows["responses"])
    by_participant: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows["responses"]:
        by_participant[r["participant"]][r["setting"]] = r
    survey: dict[str, dict[str, int]] = defaultdict(dict)
    survey_columns = sorted({(a["condition"], a["item"]) for a in rows["survey"]})
    options = option_columns(study.survey or {})  # a multi_choice item: one 0/1 column per option
    for a in rows["survey"]:
        column = f"survey_{a['condition']}_{a['item']}"
        survey[a["participant"]][column] = a["response"]
        if a["item"] in options:
            survey[a["participant"]].update(wide_option_cells(column, a["response"], options[a["item"]]))
    columns = [
        *WIDE_PARTICIPANT_COLUMNS,
        *(f"{key}_{suffix}" for key in settings for suffix, _src in WIDE_SETTING_COLUMNS),
        *(c for condition, item in survey_columns
          for c in _survey_item_columns(f"survey_{condition}_{item}", options.get(item))),
    ]
    out = []
    for p in rows["participants"]:
        row = {c: p[c] for c in PARTICIPANTS_COLUMNS}
        started, finished = p["started"], p["finished"]
        row["duration_s"] = ""
        if started and finished:
            elapsed = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
            row["duration_s"] = round(elapsed.total_seconds(), 3)
        answers = by_participant.get(p["participant"], {})
        for key in settings:
            r = answers.get(key)
            for suffix, source in WIDE_SETTING_COLUMNS:
                if r is None:
                    value = ""
                elif suffix == "time_on_task_s":
                    value = _seconds(r[source])
                else:
                    value = r[source]
                row[f"{key}_{suffix}"] = value
        row.update(survey.get(p["participant"], {}))
        out.append(row)
    return columns, out


def _survey_item_columns(column: str, options: list[str] | None) -> list[str]:
    """The wide file's column of one survey item, then a multi_choice item's option columns."""
    return [column, *(option_column(column, o) for o in options or ())]


def column_descriptions(
    *, study: Study, columns_by_file: dict[str, list[str]]
) -> dict[str, list[tuple[str, str]]]:
    """``{file name: [(column, meaning), ...]}`` for every column of every CSV in the zip.

    A column without a known meaning gets ``"(no description)"``; the tests check that none
    does, so a new export column cannot go undocumented.
    """
    typed = has_typed_items(study.survey or {})
    fixed = {
        "responses.csv": {**_RESPONSES_DOC, **column_meanings(export_fields(study))},
        # With typed items the response is written by the item's type (docs/export.md).
        "survey.csv": {**_SURVEY_DOC, "response": _TYPED_RESPONSE_DOC} if typed else _SURVEY_DOC,
        "participants.csv": _PARTICIPANTS_DOC,
    }
    wide_participant = {
        **_PARTICIPANTS_DOC,
        "duration_s": "finished - started in seconds (empty if not finished)",
    }
    settings = [s.key for s in study.settings.all() if s.kind == Setting.Kind.MAIN]
    out: dict[str, list[tuple[str, str]]] = {}
    for name, columns in columns_by_file.items():
        described = []
        for column in columns:
            if column.startswith(SCREENER_PREFIX) and name.startswith("participants"):
                meaning = (
                    f"answer to the screener {column[len(SCREENER_PREFIX):]} requested in "
                    "Prolific's demographic export"
                )
            elif name in fixed:
                meaning = fixed[name].get(column)
            elif column in wide_participant:
                meaning = wide_participant[column]
            else:
                meaning = _wide_meaning(column, settings, typed)
            described.append((column, meaning or "(no description)"))
        out[name] = described
    return out


def _wide_meaning(column: str, settings: list[str], typed: bool = False) -> str | None:
    if column.startswith("survey_") and "." in column:
        item, option = column[len("survey_"):].split(".", 1)
        return f"survey answer {item}: 1 if the option {option!r} was checked, else 0; empty if not answered"
    if column.startswith("survey_") and typed:
        return (f"survey answer {column[len('survey_'):]} (condition_item), as in survey.csv's "
                "response (by the item's type, docs/export.md); empty if not answered")
    if column.startswith("survey_"):
        return (
            f"survey answer {column[len('survey_'):]} (condition_item), 1-5 as in survey.csv; "
            "empty if not answered"
        )
    # Longest key first: a setting key may itself contain an underscore.
    for key in sorted(settings, key=len, reverse=True):
        suffix = column[len(key) + 1 :] if column.startswith(f"{key}_") else None
        if suffix in _WIDE_SETTING_DOC:
            return f"setting {key}: {_WIDE_SETTING_DOC[suffix]}"
    for suffix, meaning in _WIDE_SETTING_DOC.items():
        if column.endswith(f"_{suffix}"):
            return f"setting {column[: -len(suffix) - 1]}: {meaning}"
    return None


def readme_text(
    *, study: Study, columns_by_file: dict[str, list[str]], include_pilot: bool, counts: dict
) -> str:
    """The ``README.txt`` of the zip: what the files are, then every column of every file.

    ``counts`` is ``{file name: number of data rows}``.
    """
    lines = [
        f"Data of the study {study.slug} ({study.title})",
        f"Downloaded {timezone.now().isoformat(timespec='seconds')} (UTC).",
        "Pilot participants are "
        + ("included (participants.csv: pilot = 1)." if include_pilot else "left out."),
        "",
        "The participant column is always a pseudonym (p_ + 16 hex digits of SHA-256 over a secret",
        "per-study salt and the Prolific ID); the Prolific ID is never in these files.",
        "Text cells that begin with = + - @ ' a tab or a carriage return have one ' put in front so",
        "that spreadsheets do not run them as formulas; remove one leading ' to get the text back.",
        "Times are UTC; an empty cell means the value is not known or does not apply.",
        "",
        "responses.csv, survey.csv and participants.csv are what manage.py export_results writes.",
        "participants_wide.csv has one row per participant with their answers, final labels,",
        "times and survey answers side by side.",
    ]
    for name, described in column_descriptions(study=study, columns_by_file=columns_by_file).items():
        title = f"{name} ({counts.get(name, 0)} rows)"
        lines += ["", title, "-" * len(title)]
        lines += [f"{column}: {meaning}" for column, meaning in described]
    return "\n".join(lines) + "\n"


def _csv_text(columns: list[str], rows: list[dict]) -> str:
    buffer = io.StringIO(newline="")
    csv_write(buffer, columns, rows)
    return buffer.getvalue()


def results_zip(*, study: Study, include_pilot: bool = False) -> bytes:
    """The zip of the study's data as bytes (see the module docstring for its files).

    Pilot participants are left out unless ``include_pilot`` (as in ``export_results``). The CSV
    files are UTF-8, formula-safe (:mod:`spotlight_study.csvsafe`), and written exactly as
    ``results_export`` writes them; ``README.txt`` is UTF-8 text.
    """
    rows = export_rows(study=study, include_pilot=include_pilot)
    wide_columns, wide = wide_rows(study=study, rows=rows)
    files = {
        "responses.csv": (responses_columns(study), rows["responses"]),
        "survey.csv": (SURVEY_COLUMNS, rows["survey"]),
        "participants.csv": (participant_columns(rows["participants"], study), rows["participants"]),
        "participants_wide.csv": (wide_columns, wide),
    }
    readme = readme_text(
        study=study,
        columns_by_file={name: columns for name, (columns, _rows) in files.items()},
        include_pilot=include_pilot,
        counts={name: len(file_rows) for name, (_c, file_rows) in files.items()},
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, (columns, file_rows) in files.items():
            archive.writestr(name, _csv_text(columns, file_rows).encode("utf-8"))
        archive.writestr("README.txt", readme.encode("utf-8"))
    return buffer.getvalue()
