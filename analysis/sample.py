"""The study's sample: who took part, who was excluded and why, and their demographics.

The figures of the report's **Participants** section and of ``tables/participants.csv``, in
the shape of a paper's participants paragraph ("50 participants, 39 from the UK and 11 from the
US; 29 female, 20 male, 1 not specified; age 19 to 78, mean 38.9, median 35.5, SD 13.8; median
study duration 12:13 minutes"). Everything is read from the export alone: ``participants.csv``
(statuses, consent and completion times by the server's clock, and the demographic columns that
``manage.py prolific_demographics`` fills from Prolific's demographic export) and the exclusions
of ``responses.csv`` (:class:`~analysis.inputs.StudyData`). Plain pandas, no Django.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .errors import AnalysisInputError
from .inputs import StudyData, _parse_csv

__all__ = [
    "DEMOGRAPHIC_COLUMNS",
    "NOT_SPECIFIED",
    "PARTICIPANTS_FILE",
    "describe_sample",
    "format_mmss",
    "read_participants",
    "sample_table",
]

PARTICIPANTS_FILE = "participants.csv"
#: The demographic columns of ``participants.csv`` (Prolific's demographic export).
DEMOGRAPHIC_COLUMNS = (
    "age", "sex", "country_of_residence", "first_language", "nationality", "country_of_birth",
    "ethnicity", "student_status", "employment_status",
)
#: How a missing answer (not given, expired on Prolific) is counted among the categories.
NOT_SPECIFIED = "not specified"
#: The categorical variables of the section, in the order reported.
CATEGORICAL = ("country_of_residence", "sex", "first_language")


def read_participants(input_dir: str | Path) -> tuple[pd.DataFrame | None, str | None]:
    """``participants.csv`` of an export directory as text cells, and the SHA-256 of its bytes.

    Returns ``(None, None)`` when the file is absent (an export written before it existed).
    Raises :class:`~analysis.errors.AnalysisInputError` if it is not valid CSV or lacks the
    ``participant`` column.
    """
    path = Path(input_dir) / PARTICIPANTS_FILE
    if not path.is_file():
        return None, None
    raw = path.read_bytes()
    frame = _parse_csv(raw, PARTICIPANTS_FILE).drop(columns="_where")
    if "participant" not in frame.columns:
        raise AnalysisInputError(f"{PARTICIPANTS_FILE} is missing required column(s): participant")
    frame = frame.apply(lambda col: col.astype(str).str.strip())
    return frame, hashlib.sha256(raw).hexdigest()


def format_mmss(seconds: float | None) -> str | None:
    """``733.4`` -> ``"12:13"``: minutes (not capped at 59) and seconds, rounded to the second;
    ``None`` for a missing or undefined value."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return None
    total = int(round(float(seconds)))
    return f"{total // 60}:{total % 60:02d}"


def _counts(values: pd.Series) -> dict[str, int]:
    """Category counts, largest first (ties by name), a missing value as :data:`NOT_SPECIFIED`."""
    filled = values.where(values != "", NOT_SPECIFIED)
    counts = filled.value_counts()
    ordered = sorted(counts.items(), key=lambda kv: (kv[0] == NOT_SPECIFIED, -kv[1], kv[0]))
    return {str(k): int(v) for k, v in ordered}


def _age(values: pd.Series) -> dict:
    """n, missing, mean, median, SD (sample, ``ddof=1``), min and max of the ages in years."""
    ages = pd.to_numeric(values.where(values != ""), errors="coerce").dropna()
    stats = {"n": int(ages.size), "missing": int(values.size - ages.size)}
    if ages.empty:
        return {**stats, "mean": None, "median": None, "sd": None, "min": None, "max": None}
    sd = ages.std(ddof=1)
    return {**stats, "mean": float(ages.mean()), "median": float(ages.median()),
            "sd": None if pd.isna(sd) else float(sd), "min": int(ages.min()), "max": int(ages.max())}


def _duration(people: pd.DataFrame) -> dict:
    """Median seconds from consent to completion (``consented`` to ``finished``, server clock)."""
    if not {"consented", "finished"} <= set(people.columns):
        return {"n": 0, "median_s": None, "median_mmss": None}
    start = pd.to_datetime(people["consented"].where(people["consented"] != ""), utc=True, errors="coerce")
    end = pd.to_datetime(people["finished"].where(people["finished"] != ""), utc=True, errors="coerce")
    seconds = (end - start).dt.total_seconds().dropna()
    seconds = seconds[seconds >= 0]
    median = float(seconds.median()) if not seconds.empty else None
    return {"n": int(seconds.size), "median_s": median, "median_mmss": format_mmss(median)}


def describe_sample(data: StudyData, participants: pd.DataFrame | None,
                    participants_sha256: str | None = None) -> dict:
    """The figures of the Participants section.

    Parameters
    ----------
    data : StudyData
        The validated responses (for the exclusions and the included participants).
    participants : pandas.DataFrame or None
        ``participants.csv`` as from :func:`read_participants` (``None`` if absent).
    participants_sha256 : str, optional
        The file's SHA-256, recorded in the result.

    Returns
    -------
    dict
        ``counts``: ``in_export`` (rows of participants.csv, or None), ``by_status``,
        ``with_answers``, ``excluded``, ``included``; ``exclusions`` (reason -> participants);
        ``demographics_fetched`` (bool: any demographic cell is filled); for the included
        participants ``country_of_residence``, ``sex`` and ``first_language`` (category ->
        count, largest first, missing answers as ``"not specified"``; ``first_language`` empty
        when nobody has one), ``age`` (``n``, ``missing``, ``mean``, ``median``, ``sd``,
        ``min``, ``max`` in years; SD is the sample SD, ``ddof=1``) and ``duration`` (``n``,
        ``median_s``, ``median_mmss``: consent to completion, server clock);
        ``participants_file_sha256``.

    Notes
    -----
    Demographics and durations describe the *included* participants, the sample the tests
    analyse; the counts describe everyone in the export. Means, medians and SDs are computed by
    pandas (``Series.mean``, ``Series.median``, ``Series.std(ddof=1)``).
    """
    included = set(data.responses["participant"].unique())
    counts = {"in_export": None, "by_status": {}, "with_answers": int(data.n_participants),
              "excluded": int(sum(data.exclusions.values())), "included": int(data.n_included)}
    out = {"counts": counts, "exclusions": dict(data.exclusions), "demographics_fetched": False,
           "country_of_residence": {}, "sex": {}, "first_language": {},
           "age": _age(pd.Series([], dtype=object)),
           "duration": {"n": 0, "median_s": None, "median_mmss": None},
           "participants_file_sha256": participants_sha256}
    if participants is None:
        return out
    counts["in_export"] = int(len(participants))
    if "status" in participants.columns:
        counts["by_status"] = {str(k): int(v) for k, v in sorted(participants["status"].value_counts().items())}
    people = participants[participants["participant"].isin(included)]
    present = [c for c in DEMOGRAPHIC_COLUMNS if c in participants.columns]
    out["demographics_fetched"] = bool(present) and bool((participants[present] != "").to_numpy().any())
    out["duration"] = _duration(people)
    if not out["demographics_fetched"]:
        return out
    for column in CATEGORICAL:
        if column in people.columns and (people[column] != "").any():
            out[column] = _counts(people[column])
    if "age" in people.columns:
        out["age"] = _age(people["age"])
    return out


def sample_table(sample: Mapping) -> pd.DataFrame:
    """``tables/participants.csv``: the figures of :func:`describe_sample` as rows of
    ``section, item, value`` (counts as integers, ages in years, durations in seconds and as
    ``mm:ss``)."""
    rows: list[tuple[str, str, object]] = []
    for key in ("in_export", "with_answers", "excluded", "included"):
        rows.append(("counts", key, sample["counts"][key]))
    rows += [("status", k, v) for k, v in sample["counts"]["by_status"].items()]
    rows += [("exclusion", k, v) for k, v in sample["exclusions"].items()]
    rows.append(("demographics", "fetched", int(bool(sample["demographics_fetched"]))))
    for column in CATEGORICAL:
        rows += [(column, k, v) for k, v in sample[column].items()]
    rows += [("age", k, sample["age"][k]) for k in ("n", "missing", "mean", "median", "sd", "min", "max")]
    rows += [("duration", k, sample["duration"][k]) for k in ("n", "median_s", "median_mmss")]
    return pd.DataFrame(rows, columns=["section", "item", "value"])
