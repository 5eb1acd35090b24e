"""The survey part of a codebook report: when a study's declared outcome is no proportion, the
reference report is not written (its identification tests need a yes/no outcome), so the
codebook report carries the survey's tests itself, in the researcher's words.

The results are those of :func:`analysis.pipeline.survey_results` (the same tests as the
reference report: Mann-Whitney U and Wilcoxon for the items without a type, each typed item by
its type, :data:`analysis.survey_measures.SURVEY_TESTS`) with ``survey_words``
(:func:`analysis.survey_measures.item_words`). Pure Python, no Django.
"""
from __future__ import annotations

from collections.abc import Mapping

from .document import Data, Heading, Para, Table, fmt_num, fmt_p
from .inputs import PATTERN_CONDITIONS
from .pipeline import section_name
from .report_survey import typed_survey_blocks

__all__ = ["survey_blocks"]


def survey_blocks(survey: Mapping) -> list:
    """The report's survey sections (:mod:`analysis.document` blocks) from ``survey``: the
    items without a type (one table per pattern condition compared) and the typed items'
    section of :func:`analysis.report_survey.typed_survey_blocks`."""
    words = ((survey.get("survey_words") or {}).get("items")) or {}
    blocks: list = []
    untyped = [t for t in PATTERN_CONDITIONS if survey.get(section_name("likert", t))]
    if untyped:
        blocks.append(Heading(2, "Post-task survey"))
        blocks.append(Para("Items without a type, as in the reference study: Mann-Whitney U test between "
                           "the conditions (scipy.stats.mannwhitneyu) and the Wilcoxon signed-rank test "
                           "on participants who answered both (scipy.stats.wilcoxon); Holm's correction "
                           "across the Mann-Whitney tests."))
    for treatment in untyped:
        section = section_name("likert", treatment)
        paired = survey[section_name("likert_paired", treatment)]
        holm = survey["holm"][section]
        rows = [[Data(item), Data(words.get(item, item)), r["alternative"], fmt_num(r["U"], 1),
                 fmt_p(r["p"]), fmt_p(holm[item]["p_holm"]), fmt_num(paired[item].get("W"), 1),
                 fmt_p(paired[item].get("p"))]
                for item, r in survey[section].items()]
        blocks.append(Para(f"{treatment} versus no_pattern:"))
        blocks.append(Table(["Item", "Text", "Alternative", "U", "p", "p (Holm)", "Wilcoxon W",
                             "Wilcoxon p"], rows))
    return blocks + typed_survey_blocks(survey)
