"""``manage.py analyze`` for a study with a declared codebook: its outcome tested by type,
agreement per field, its multi_choice fields per condition (:mod:`analysis.codebook_analysis`)
and the survey (:func:`analysis.pipeline.survey_results`), written as ``codebook_results.json``
and ``codebook_report.*``, which are the study's ``results.json`` and ``report.html``.

The reference analysis (:func:`analysis.run_analysis`) is not run: it needs the default
codebook's three yes/no outcome columns (identified, other difference, no difference), which a
declared codebook does not have. A proportion outcome (yes/no, or mapped to success by
``codebook.success``) is tested with the reference study's one-tailed two-proportion z-test
by :func:`analysis.codebook_analysis.outcome_tests` all the same.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from analysis.codebook_analysis import codebook_results, write_codebook_report
from analysis.inputs import load_export
from analysis.pipeline import survey_results
from analysis.survey_measures import item_words

from spotlight_study.annotation.codebook_agreement import codebook_agreement
from spotlight_study.studies.models import Study


def codebook_analysis_write(*, study: Study, data_dir: Path, out: Path, include_pilot: bool,
                            plan: dict | None = None) -> dict:
    """Analyse ``data_dir/responses.csv`` under the study's declared codebook and write the
    codebook report into ``out``; returns the plain results (``codebook_results.json``) with
    ``input_sha256``, the SHA-256 of that ``responses.csv``, and ``survey``
    (:func:`analysis.pipeline.survey_results` of the same export). With a preregistered ``plan``
    the codebook analysed is compared with the one it records (``deviations``).

    Raises ``analysis.AnalysisInputError`` if the responses cannot be analysed.
    """
    path = data_dir / "responses.csv"
    responses = pd.read_csv(path, dtype=str, keep_default_na=False)
    agreement = codebook_agreement(study=study, is_pilot=None if include_pilot else False)
    # No reference report (it needs the default codebook's outcomes): the survey is tested here.
    data = load_export(data_dir, outcomes=False)
    survey = {**survey_results(data), "survey_words": item_words(data.survey_items)}
    results = codebook_results(responses, study.annotation_codebook, agreement, plan=plan,
                               survey=survey)
    plain = write_codebook_report(results, out, title=study.title)
    plain["input_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return plain
