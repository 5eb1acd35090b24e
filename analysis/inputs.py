"""Reading and validating the exported study data.

The export directory holds ``responses.csv`` (one row per participant x
setting) and ``survey.csv`` (one row per participant x condition x item), as
written by ``manage.py export_results``. Everything here checks those files
and returns typed DataFrames of the *included* participants; nothing in the
statistics layer ever sees an excluded participant.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .csv_guard import unneutralize
from .errors import AnalysisInputError
from .survey_measures import load_survey_items, split_typed_rows

__all__ = ["BASELINE_CONDITION", "LIKERT_CONDITIONS", "OUTCOME_COLUMNS", "PATTERN_CONDITIONS",
           "RESPONSE_COLUMNS", "RESPONSE_CONDITIONS", "SURVEY_COLUMNS", "SURVEY_CONDITIONS",
           "StudyData", "input_sha256", "load_export", "prepare_data"]

RESPONSES_FILE = "responses.csv"
SURVEY_FILE = "survey.csv"
#: Files covered by :func:`input_sha256`, in hashing order.
INPUT_FILES = (RESPONSES_FILE, SURVEY_FILE)

OUTCOME_COLUMNS = ("identified", "other_difference", "no_difference")
RESPONSE_COLUMNS = (
    "participant",
    "setting",
    "condition",
    "position",
    *OUTCOME_COLUMNS,
    "time_on_task_ms",
    "excluded",
    "exclusion_reason",
)
SURVEY_COLUMNS = ("participant", "condition", "item", "response")

RESPONSE_CONDITIONS = ("pattern", "no_pattern", "pattern_with_distractors")
#: The comparison group of every test: participants who saw no pattern box.
BASELINE_CONDITION = "no_pattern"
#: Conditions with a pattern box; each is compared with :data:`BASELINE_CONDITION`.
PATTERN_CONDITIONS = ("pattern", "pattern_with_distractors")
#: Conditions a per-condition survey item can be about (every condition of a study).
LIKERT_CONDITIONS = RESPONSE_CONDITIONS
SURVEY_CONDITIONS = (*LIKERT_CONDITIONS, "background")
LIKERT_MIN, LIKERT_MAX = 1, 5
#: Reason counted for an excluded participant whose rows give none.
UNSPECIFIED_REASON = "unspecified"


_TRUE = {"1", "1.0", "true"}
_FALSE = {"0", "0.0", "false"}
# Cap on offending rows quoted in one message; the rest are counted.
_MAX_LISTED = 10


@dataclass(frozen=True)
class StudyData:
    """Validated study data, restricted to included participants.

    Attributes
    ----------
    responses : pandas.DataFrame, shape (n_rows, 8)
        One row per included participant x setting with columns
        ``participant``, ``setting``, ``condition`` (str), ``position``,
        ``identified``, ``other_difference``, ``no_difference`` (int) and
        ``time_on_task_ms`` (float, milliseconds).
    survey : pandas.DataFrame, shape (n_answers, 4)
        One row per included participant x condition x item with columns
        ``participant``, ``condition`` (one of :data:`SURVEY_CONDITIONS`),
        ``item`` (str) and ``response`` (int, 1-5).
    exclusions : dict of str to int
        Excluded participants per reason, sorted by reason. A participant
        with several distinct reasons is counted once, under the reasons
        joined by ``"; "``.
    n_participants : int
        Distinct participants in ``responses.csv``, excluded ones included.
    n_included : int
        Distinct participants left after exclusions.
    input_sha256 : str or None
        See :func:`input_sha256`; None when built from DataFrames.
    file_sha256 : dict of str to str
        SHA-256 of each input file; empty when built from DataFrames.
    survey_items, survey_typed : dict or None, pandas.DataFrame or None
        The export's ``survey_items.json`` and the ``survey.csv`` rows of its typed items,
        which ``survey`` leaves out (:mod:`analysis.survey_measures`); None without the file.
    """

    responses: pd.DataFrame
    survey: pd.DataFrame
    exclusions: dict[str, int]
    n_participants: int
    n_included: int
    input_sha256: str | None = None
    file_sha256: dict[str, str] = field(default_factory=dict)
    survey_items: dict | None = None
    survey_typed: pd.DataFrame | None = None


# --------------------------------------------------------------------------
# hashing
# --------------------------------------------------------------------------
def _combined_sha256(per_file: dict[str, str]) -> str:
    manifest = "".join(f"{per_file[name]}  {name}\n" for name in INPUT_FILES)
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def input_sha256(input_dir: str | Path) -> tuple[str, dict[str, str]]:
    """SHA-256 fingerprint of the export directory's input files.

    Parameters
    ----------
    input_dir : str or pathlib.Path
        Directory holding ``responses.csv`` and ``survey.csv``.

    Returns
    -------
    combined : str
        64 lowercase hex digits identifying the exact input bytes.
    per_file : dict of str to str
        ``{"responses.csv": hex, "survey.csv": hex}``, each the SHA-256 of
        that file's bytes.

    Raises
    ------
    AnalysisInputError
        If either file is missing.

    Notes
    -----
    ``combined`` is the SHA-256 of the manifest text
    ``"<sha256(responses.csv)>  responses.csv\\n<sha256(survey.csv)>  survey.csv\\n"``
    (two spaces, UTF-8, trailing newline): exactly the output of
    ``sha256sum responses.csv survey.csv``, so it can be checked in the
    export directory with ``sha256sum responses.csv survey.csv | sha256sum``.
    Hashing a manifest rather than the concatenated bytes keeps the file
    boundary in the fingerprint.

    References
    ----------
    .. [1] NIST FIPS 180-4, *Secure Hash Standard* (2015).

    Examples
    --------
    >>> combined, per_file = input_sha256("export/")  # doctest: +SKIP
    >>> len(combined)  # doctest: +SKIP
    64
    """
    root = Path(input_dir)
    per_file = {name: hashlib.sha256(_read_bytes(root / name)).hexdigest() for name in INPUT_FILES}
    return _combined_sha256(per_file), per_file


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------
def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise AnalysisInputError(f"{path.name} not found in {path.parent}")
    return path.read_bytes()


def _undo_formula_guard(cell: str) -> str:
    """Remove the one leading quote the platform's CSV writer puts before risky text.

    The export prefixes every text cell that begins with ``= + - @``, a tab,
    a carriage return or a quote with exactly one ``'``, so that spreadsheet
    programs do not run it as a formula (CSV injection). Because a leading
    quote is itself prefixed, removing one leading quote restores the
    original text exactly (:func:`analysis.csv_guard.unneutralize`).
    """
    return unneutralize(cell)


def _parse_csv(data: bytes, name: str) -> pd.DataFrame:
    """Parse CSV bytes as strings, adding ``_where`` = "line N" of each record's start.

    The csv module is used (not pandas) so that free-text answers spanning
    several lines still give the physical line number an editor shows. Each
    data cell goes through :func:`_undo_formula_guard` before anything else.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AnalysisInputError(f"{name} is not valid UTF-8: {exc}") from exc
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is None:
            raise AnalysisInputError(f"{name} is empty (no header row)")
        header = [h.strip() for h in header]
        rows, wheres = [], []
        start = reader.line_num + 1
        for record in reader:
            if any(cell.strip() for cell in record):
                if len(record) != len(header):
                    raise AnalysisInputError(
                        f"{name} line {start}: expected {len(header)} fields, got {len(record)}"
                    )
                rows.append([_undo_formula_guard(cell) for cell in record])
                wheres.append(f"line {start}")
            start = reader.line_num + 1
    except csv.Error as exc:
        raise AnalysisInputError(f"{name} is not a valid CSV file: {exc}") from exc
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    if frame.columns.duplicated().any():
        dup = sorted(set(frame.columns[frame.columns.duplicated()]))
        raise AnalysisInputError(f"{name} has duplicate column(s): {', '.join(dup)}")
    frame["_where"] = wheres
    return frame


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _normalise(frame: pd.DataFrame, columns: Iterable[str], source: str) -> pd.DataFrame:
    """Check required columns and return them as stripped strings ("" for missing)."""
    frame = frame.rename(columns=lambda c: str(c).strip())
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"{source} is missing required column(s): {', '.join(missing)}")
    out = pd.DataFrame(index=range(len(frame)))
    for col in columns:
        # dtype=object keeps the .str accessor usable when the file has no rows.
        out[col] = pd.Series(
            ["" if (v is None or (isinstance(v, float) and math.isnan(v))) else str(v).strip()
             for v in frame[col].tolist()],
            index=out.index, dtype=object,
        )
    if "_where" in frame.columns:
        out["_where"] = frame["_where"].tolist()
    else:
        out["_where"] = [f"row {i + 1}" for i in range(len(frame))]
    return out


def _listing(items: list[str]) -> str:
    shown = "; ".join(items[:_MAX_LISTED])
    if len(items) > _MAX_LISTED:
        shown += f"; and {len(items) - _MAX_LISTED} more"
    return shown


def _row_label(row: pd.Series, with_setting: bool = True) -> str:
    label = f"{row['_where']} (participant {row['participant']!r}"
    if with_setting and "setting" in row:
        label += f", setting {row['setting']!r}"
    elif "item" in row:
        label += f", item {row['item']!r}"
    return label + ")"


def _fail_rows(frame: pd.DataFrame, mask: pd.Series, message: str, value_col: str | None = None,
               with_setting: bool = True) -> None:
    """Raise listing the rows selected by ``mask``, if any."""
    if not mask.any():
        return
    items = []
    for _, row in frame[mask].iterrows():
        text = _row_label(row, with_setting)
        if value_col is not None:
            text += f": {row[value_col]!r}"
        items.append(text)
    raise AnalysisInputError(f"{message}: {_listing(items)}")


def _groups_phrase(conditions: list[str]) -> str:
    """``"both 'pattern' and 'no_pattern' groups"``, ``"'a', 'b' and 'c' groups"``, ..."""
    quoted = [repr(c) for c in conditions]
    if len(quoted) == 1:
        return f"a {quoted[0]} group"
    joined = f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    return f"both {joined} groups" if len(quoted) == 2 else f"{joined} groups"


def _parse_binary(values: pd.Series) -> pd.Series:
    """Map 0/1 spellings to 0/1; anything else becomes -1 (invalid)."""
    lowered = values.str.lower()
    return lowered.map(lambda v: 1 if v in _TRUE else 0 if v in _FALSE else -1)


def _parse_number(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values.where(values != ""), errors="coerce")


# --------------------------------------------------------------------------
# responses.csv
# --------------------------------------------------------------------------
def _exclusions(df: pd.DataFrame) -> tuple[set[str], dict[str, int]]:
    """Excluded participants, and how many per reason (sorted): one excluded row excludes the
    participant everywhere; several reasons are sorted and joined with "; "."""
    excluded_ids = set(df.loc[df["excluded"] == 1, "participant"])
    exclusions: dict[str, int] = {}
    for participant in sorted(excluded_ids):
        rows = df[(df["participant"] == participant) & (df["excluded"] == 1)]
        reasons = sorted({r for r in rows["exclusion_reason"] if r})
        reason = "; ".join(reasons) if reasons else UNSPECIFIED_REASON
        exclusions[reason] = exclusions.get(reason, 0) + 1
    return excluded_ids, dict(sorted(exclusions.items()))


def _check_every_group(df: pd.DataFrame, settings: list[str], excluded_ids: set[str], source: str) -> None:
    """Every setting has included participants in every condition of the file."""
    # The design's conditions are those in the file, so that one setting missing a group (too
    # few participants yet, or all excluded) is reported instead of silently left untested.
    conditions = [c for c in RESPONSE_CONDITIONS if c in set(df["condition"])]
    for setting in settings:
        for condition in conditions:
            in_group = (df["setting"] == setting) & (df["condition"] == condition)
            if int((in_group & ~df["participant"].isin(excluded_ids)).sum()) == 0:
                n_exc = int(in_group.sum())
                note = f" ({n_exc} row(s) there, all excluded)" if n_exc else ""
                raise AnalysisInputError(
                    f"{source}: setting {setting!r} has no included participants in condition "
                    f"{condition!r}{note}; every setting needs {_groups_phrase(conditions)}"
                )


def _prepare_responses(raw: pd.DataFrame, source: str, outcomes: bool = True) -> tuple[pd.DataFrame, dict, int, set]:
    df = _normalise(raw, RESPONSE_COLUMNS, source)
    if df.empty:
        raise AnalysisInputError(
            f"{source} has no rows: no participant has answered a main task yet, so there is "
            f"nothing to analyse"
        )

    _fail_rows(df, (df["participant"] == "") | (df["setting"] == ""),
               f"{source}: participant and setting must not be empty")
    _fail_rows(df, ~df["condition"].isin(RESPONSE_CONDITIONS),
               f"{source}: unknown condition value(s) (allowed: {', '.join(RESPONSE_CONDITIONS)})",
               value_col="condition")
    excluded = _parse_binary(df["excluded"])
    _fail_rows(df, excluded < 0, f"{source}: 'excluded' must be 0 or 1", value_col="excluded")
    df["excluded"] = excluded

    dup_mask = df.duplicated(["participant", "setting"], keep=False)
    if dup_mask.any():
        groups = []
        for (participant, setting), grp in df[dup_mask].groupby(["participant", "setting"], sort=True):
            groups.append(f"participant {participant!r}, setting {setting!r} at {', '.join(grp['_where'])}")
        raise AnalysisInputError(
            f"{source}: duplicate participant x setting rows (each participant answers a setting once): "
            f"{_listing(groups)}"
        )

    excluded_ids, exclusions = _exclusions(df)
    n_participants = df["participant"].nunique()

    settings = sorted(df["setting"].unique())
    inc = df[~df["participant"].isin(excluded_ids)].copy()
    if inc.empty:
        raise AnalysisInputError(f"{source}: every participant is excluded; nothing to analyse")

    outcome_columns = OUTCOME_COLUMNS if outcomes else ()
    for col in outcome_columns:
        _fail_rows(inc, inc[col] == "",
                   f"{source}: '{col}' is empty for included participant(s); the answers must be "
                   f"annotated first (or the participant excluded)")
        parsed = _parse_binary(inc[col])
        _fail_rows(inc, parsed < 0, f"{source}: '{col}' must be binary (0 or 1)", value_col=col)
        inc[col] = parsed.astype(int)

    times = _parse_number(inc["time_on_task_ms"])
    _fail_rows(inc, times.isna() | (times < 0),
               f"{source}: 'time_on_task_ms' must be a non-negative number of milliseconds",
               value_col="time_on_task_ms")
    inc["time_on_task_ms"] = times.astype(float)

    positions = _parse_number(inc["position"])
    bad_pos = positions.isna() | (positions < 1) | (positions % 1 != 0)
    _fail_rows(inc, bad_pos, f"{source}: 'position' must be a whole number >= 1", value_col="position")
    inc["position"] = positions.astype(int)

    _check_every_group(df, settings, excluded_ids, source)
    columns = ["participant", "setting", "condition", "position", *outcome_columns, "time_on_task_ms"]
    return inc[columns].reset_index(drop=True), exclusions, n_participants, excluded_ids


# --------------------------------------------------------------------------
# survey.csv
# --------------------------------------------------------------------------
def _prepare_survey(raw: pd.DataFrame, source: str, known: set[str], excluded_ids: set[str],
                    design_conditions: list[str]) -> pd.DataFrame:
    df = _normalise(raw, SURVEY_COLUMNS, source)
    if df.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in SURVEY_COLUMNS}).astype({"response": int})

    _fail_rows(df, (df["participant"] == "") | (df["item"] == ""),
               f"{source}: participant and item must not be empty", with_setting=False)
    _fail_rows(df, ~df["condition"].isin(SURVEY_CONDITIONS),
               f"{source}: unknown condition value(s) (allowed: {', '.join(SURVEY_CONDITIONS)})",
               value_col="condition", with_setting=False)
    _fail_rows(df, ~df["participant"].isin(known),
               f"{source}: participant(s) not found in {RESPONSES_FILE}", with_setting=False)

    dup_mask = df.duplicated(["participant", "condition", "item"], keep=False)
    if dup_mask.any():
        groups = [
            f"participant {p!r}, condition {c!r}, item {i!r} at {', '.join(grp['_where'])}"
            for (p, c, i), grp in df[dup_mask].groupby(["participant", "condition", "item"], sort=True)
        ]
        raise AnalysisInputError(
            f"{source}: duplicate participant x condition x item rows: {_listing(groups)}"
        )

    is_background = df["condition"] == "background"
    mixed = sorted(set(df.loc[is_background, "item"]) & set(df.loc[~is_background, "item"]))
    if mixed:
        raise AnalysisInputError(
            f"{source}: item(s) used both as background and as per-condition items: {', '.join(mixed)}"
        )

    inc = df[~df["participant"].isin(excluded_ids)].copy()
    responses = _parse_number(inc["response"])
    bad = responses.isna() | (responses % 1 != 0) | (responses < LIKERT_MIN) | (responses > LIKERT_MAX)
    _fail_rows(inc, bad, f"{source}: 'response' must be a whole number from {LIKERT_MIN} to {LIKERT_MAX}",
               value_col="response", with_setting=False)
    inc["response"] = responses.astype(int)

    unseen = sorted(set(df["condition"]) - set(design_conditions) - {"background"})
    if unseen:
        raise AnalysisInputError(
            f"{source}: condition(s) {', '.join(repr(c) for c in unseen)} occur in the survey but in "
            f"no row of {RESPONSES_FILE}; participants rate only the conditions they saw"
        )
    per_condition = inc[inc["condition"].isin(LIKERT_CONDITIONS)]
    # Participants rate each per-condition item once for every condition they saw, so each item
    # needs answers for every condition of the design, or its comparisons would silently differ.
    conditions = design_conditions
    for item in sorted(set(per_condition["item"])):
        for condition in conditions:
            if not ((per_condition["item"] == item) & (per_condition["condition"] == condition)).any():
                raise AnalysisInputError(
                    f"{source}: item {item!r} has no included responses for condition {condition!r}; "
                    f"each per-condition item needs answers for {', '.join(repr(c) for c in conditions)}"
                )
    return inc[list(SURVEY_COLUMNS)].reset_index(drop=True)


# --------------------------------------------------------------------------
# public entry points
# --------------------------------------------------------------------------
def prepare_data(
    responses: pd.DataFrame,
    survey: pd.DataFrame,
    *,
    responses_source: str = RESPONSES_FILE,
    survey_source: str = SURVEY_FILE,
    outcomes: bool = True,
) -> StudyData:
    """Validate export DataFrames and drop excluded participants.

    Parameters
    ----------
    responses : pandas.DataFrame, shape (n_rows, >=10)
        Columns of ``responses.csv`` (see :data:`RESPONSE_COLUMNS`); extra
        columns are ignored. Values may be strings or numbers.
    survey : pandas.DataFrame, shape (n_answers, >=4)
        Columns of ``survey.csv`` (see :data:`SURVEY_COLUMNS`).
    responses_source, survey_source : str
        Names used in error messages.
    outcomes : bool, default True
        Check and keep :data:`OUTCOME_COLUMNS`; ``False`` leaves them out (a declared codebook,
        whose survey :func:`analysis.pipeline.survey_results` tests).

    Returns
    -------
    StudyData
        Typed, included-only data, the exclusion counts and participant
        numbers; ``input_sha256`` is None.

    Raises
    ------
    AnalysisInputError
        On a responses table without rows (no answers yet); missing columns;
        empty participant, setting or item; unknown condition values;
        ``excluded`` not 0/1; duplicate participant x setting (or
        participant x condition x item) rows; empty (unannotated) or
        non-binary outcomes, bad times or positions of included
        participants; a setting without included participants in one of the
        conditions found in the responses; survey participants missing from
        the responses; survey responses outside 1-5; a survey condition that
        no response row has; a per-condition survey item without included
        answers for one of the design's conditions. Each message names the
        rows.

    Notes
    -----
    A participant with ``excluded = 1`` on any row is removed from both
    files. Outcome columns of excluded rows are not checked (they are often
    left unannotated). Binary values accept ``0``/``1``, ``0.0``/``1.0`` and
    ``true``/``false`` (any case).

    The design is read from the data: its conditions are the values of
    ``condition`` in the responses (any of :data:`RESPONSE_CONDITIONS`), in
    any number of settings. Every setting must have included participants
    in each of them, so that no comparison is silently missing for one
    setting.

    References
    ----------
    .. [1] Issue 4, "analysis/: the study statistics" (input specification).
    .. [2] Issue 9, item 7: the analysis runs on every design the platform
       accepts (distractor condition, three or more settings, no answers).

    Examples
    --------
    >>> data = prepare_data(pd.read_csv("responses.csv"), pd.read_csv("survey.csv"))  # doctest: +SKIP
    >>> data.exclusions  # doctest: +SKIP
    {'failed instruction check': 1}
    """
    inc, exclusions, n_participants, excluded_ids = _prepare_responses(responses, responses_source, outcomes)
    raw = _normalise(responses, ["participant", "condition"], responses_source)
    design_conditions = [c for c in LIKERT_CONDITIONS if c in set(raw["condition"])]
    survey_inc = _prepare_survey(survey, survey_source, set(raw["participant"]), excluded_ids,
                                 design_conditions)
    return StudyData(
        responses=inc,
        survey=survey_inc,
        exclusions=exclusions,
        n_participants=int(n_participants),
        n_included=int(inc["participant"].nunique()),
    )


def load_export(input_dir: str | Path, *, outcomes: bool = True) -> StudyData:
    """Read, fingerprint and validate an export directory.

    Parameters
    ----------
    input_dir : str or pathlib.Path
        Directory with ``responses.csv`` and ``survey.csv`` (UTF-8, a BOM is
        tolerated), as written by ``manage.py export_results``.
    outcomes : bool, default True (as in :func:`prepare_data`)

    Returns
    -------
    StudyData
        As from :func:`prepare_data`, with ``input_sha256`` and
        ``file_sha256`` filled in.

    Raises
    ------
    AnalysisInputError
        If a file is missing, unreadable or malformed, or for any reason
        listed in :func:`prepare_data`. Row references are physical line
        numbers of the CSV file ("line 7"), header = line 1.

    Notes
    -----
    Files are parsed with the standard ``csv`` module, all cells as text,
    then validated by :func:`prepare_data`. The platform's export guards
    against spreadsheet formula injection by putting one ``'`` before every
    text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab, a carriage
    return or ``'``; one leading ``'`` is removed from every cell before
    validation, which restores the original text (a setting key ``-x`` is
    exported as ``'-x`` and read back as ``-x``). The fingerprint is of the
    file bytes as written.

    References
    ----------
    .. [1] RFC 4180, *Common Format and MIME Type for CSV Files*.
    .. [2] OWASP, "CSV Injection" (the quote prefix the export applies).

    Examples
    --------
    >>> data = load_export("export/")  # doctest: +SKIP
    >>> sorted(data.responses["setting"].unique())  # doctest: +SKIP
    ['doctor', 'farming']
    """
    root = Path(input_dir)
    if not root.is_dir():
        raise AnalysisInputError(f"input directory {root} does not exist")
    # Hash and parse the same bytes, so the fingerprint always matches what was analysed.
    raw = {name: _read_bytes(root / name) for name in INPUT_FILES}
    per_file = {name: hashlib.sha256(raw[name]).hexdigest() for name in INPUT_FILES}
    items = load_survey_items(root)  # the typed items' rows are checked by their own type
    survey, typed = split_typed_rows(_parse_csv(raw[SURVEY_FILE], SURVEY_FILE), items)
    data = prepare_data(_parse_csv(raw[RESPONSES_FILE], RESPONSES_FILE), survey, outcomes=outcomes)
    return StudyData(
        responses=data.responses,
        survey=data.survey,
        exclusions=data.exclusions,
        n_participants=data.n_participants,
        n_included=data.n_included,
        input_sha256=_combined_sha256(per_file),
        file_sha256=per_file,
        survey_items=items,
        survey_typed=typed if items else None,
    )
