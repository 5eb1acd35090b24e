"""``manage.py analyze`` for a study with a declared codebook: its outcome tested by type,
agreement per field and its multi_choice fields per condition (:mod:`analysis.codebook_analysis`),
written beside the reference analysis as ``codebook_results.json`` and ``codebook_report.*``.

When the outcome is a proportion (yes/no, or mapped to success by ``codebook.success``), the
reference analysis runs as well, on ``identified``, which the export fills from the outcome;
otherwise (an ordinal, number or nominal outcome) the codebook report is the study's report.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from analysis.codebook_analysis import codebook_results, write_codebook_report
from analysis.inputs import load_export
from analysis.measures import outcome_test_of
from analysis.pipeline import survey_results
from analysis.survey_measures import item_words

from spotlight_study.annotation.codebook_agreement import codebook_agreement
from spotlight_study.studies import codebook as cb
from spotlight_study.studies.models import Study


def outcome_is_proportion(study: Study) -> bool:
    """Whether the study's outcome is tested by the reference z-test (default codebook, a
    yes/no outcome, or a success mapping)."""
    book = cb.resolved(study.annotation_codebook)
    return outcome_test_of(cb.field_by_key(book, book["outcome"]), book.get("success")) == (
        "two_proportion_ztest"
    )


def codebook_analysis_write(*, study: Study, data_dir: Path, out: Path, include_pilot: bool,
                            plan: dict | None = None) -> dict:
    """Analyse ``data_dir/responses.csv`` under the study's declared codebook and write the
    codebook report into ``out``; returns the plain results (``codebook_results.json``) with
    ``input_sha256``, the SHA-256 of that ``responses.csv``. When the outcome is no proportion
    the survey is analysed too (``survey``: :func:`analysis.pipeline.survey_results`), since
    no reference report is written then. With a preregistered ``plan``
    the codebook analysed is compared with the one it records (``deviations``).

    Raises ``analysis.AnalysisInputError`` if the responses cannot be analysed.
    """
    path = data_dir / "responses.csv"
    responses = pd.read_csv(path, dtype=str, keep_default_na=False)
    agreement = codebook_agreement(study=study, is_pilot=None if include_pilot else False)
    survey = None
    if not outcome_is_proportion(study):
        # No reference report (it needs a yes/no outcome): the survey is tested here instead.
        data = load_export(data_dir, outcomes=False)
        survey = {**survey_results(data), "survey_words": item_words(data.survey_items)}
    results = codebook_results(responses, study.annotation_codebook, agreement, plan=plan,
                               survey=survey)
    plain = write_codebook_report(results, out, title=study.title)
    plain["input_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return plain
