"""Building a study's analysis plan: hypotheses, tests, exclusion rules, planned N, definition hash.

Everything here reads; nothing is saved (see :mod:`spotlight_study.prereg.services`). The tests and
their alternatives come from the ``analysis`` package itself (:func:`analysis.deviations.planned_tests`,
:func:`analysis.pipeline.likert_alternatives_for`, :data:`analysis.pipeline.HOLM_FAMILIES`), so the
plan states exactly what ``manage.py analyze`` will run.
"""
from __future__ import annotations

from dataclasses import dataclass

from spotlight_study.studies.models import Study
from spotlight_study.studies.schema_survey import typed_items
from spotlight_study.studies.selectors import main_settings, study_cells, training_setting

from .errors import PlanInputError

# The rules of ``results.exports._exclusion``, in the order it applies them, plus the
# exclusions an annotator can give in a final label (annotation's ``Label.Exclusion`` without
# ``none``; tests/prereg checks that the two lists agree).
EXCLUSION_RULES = (
    ("failed_instruction_check",
     "The participant failed the instruction check of the training setting: its final label does not "
     "have the target identified or excludes it as failed_instruction_check; before annotation, the "
     "automatic keyword check decides. Excludes all of the participant's answers."),
    ("failed_check_page",
     "The participant failed a check page of the study file (an attention check or a comprehension "
     "quiz) at its last try, whatever its on_fail policy then did. Excludes all of the participant's "
     "answers."),
    ("incomplete", "The participant did not complete the study (status other than completed)."),
    ("copy_pasted", "The final label of an answer (or of the training answer) excludes it as copy-pasted."),
    ("ai_generated", "The final label of an answer (or of the training answer) excludes it as AI-generated."),
    ("duplicate", "The final label of an answer (or of the training answer) excludes it as a duplicate."),
    ("other", "The final label of an answer (or of the training answer) excludes it for another reason "
     "(explained in the adjudication note)."),
)
EXCLUSION_SCOPE = (
    "A participant with any excluded answer is removed from every test and every descriptive "
    "statistic, in every setting and in the survey (analysis.inputs)."
)
IDENTIFICATION_ALTERNATIVE = "larger"


@dataclass(frozen=True)
class SampleSizeInput:
    """How the planned N is obtained: given (``planned_n``) or from the planner (rates, power, dropout)."""

    planned_n: int | None = None
    p_control: float | None = None
    p_treatment: float | None = None
    power: float = 0.8
    dropout: float = 0.0


def study_definition(study: Study) -> dict:
    """The part of ``study`` that participants see, as plain JSON data.

    Study texts (consent, instructions, example answer, pattern intro, task prompt), conditions,
    answer-length limits and the survey; each setting (training first, then main settings in
    definition order) with its key, kind, title, both text groups and its token patterns (tokens,
    group, distractor flag, in position order). Annotation-only fields (target description,
    codebook, check keywords) and Prolific codes are left out: they are not shown to participants.
    """
    settings = [s for s in [training_setting(study)] if s is not None] + main_settings(study)
    return {
        "title": study.title,
        "consent_text": study.consent_text,
        "instructions_text": study.instructions_text,
        "example_answer": study.example_answer,
        "pattern_intro_text": study.pattern_intro_text,
        "task_prompt": study.task_prompt,
        "conditions": list(study.conditions),
        "min_answer_chars": study.min_answer_chars,
        "max_answer_chars": study.max_answer_chars,
        "survey": study.survey,
        "settings": [
            {
                "key": s.key,
                "kind": s.kind,
                "title": s.title,
                "group1_texts": list(s.group1_texts),
                "group2_texts": list(s.group2_texts),
                "patterns": [
                    {"tokens": list(p.tokens), "group": p.group, "is_distractor": p.is_distractor}
                    for p in sorted(s.patterns.all(), key=lambda p: (p.position, p.pk))
                ],
            }
            for s in settings
        ],
    }


def _sample_size(study: Study, given: SampleSizeInput, alpha: float) -> dict:
    from analysis import AnalysisInputError, plan_sample_size

    if given.planned_n is not None:
        if given.planned_n < 1:
            raise PlanInputError(f"--planned-n must be at least 1, got {given.planned_n}.")
        return {"planned_n": given.planned_n, "derivation": "given by the researcher (--planned-n)",
                "planner": None}
    if given.p_control is None or given.p_treatment is None:
        raise PlanInputError(
            "Give the planned N: --planned-n N, or --p-control and --p-treatment (with --power and "
            "--dropout) for the sample-size planner."
        )
    try:
        sp = plan_sample_size(given.p_control, given.p_treatment, alpha=alpha, power=given.power,
                              dropout=given.dropout, cells=len(study_cells(study)),
                              conditions=len(study.conditions))
    except AnalysisInputError as exc:
        raise PlanInputError(f"{str(exc)[:1].upper()}{str(exc)[1:]}.") from None
    return {
        "planned_n": sp.n_total,
        "derivation": (
            f"analysis.planning.plan_sample_size: statsmodels NormalIndPower for Cohen's h = "
            f"{sp.cohens_h:.4f} (P0 = {sp.p_control:g}, P1 = {sp.p_treatment:g}, one-sided, "
            f"alpha = {sp.alpha:g}, power = {sp.power:g}) gives {sp.n_per_condition} per condition, "
            f"{sp.n_per_condition_with_dropout} with dropout {sp.dropout:g}; times {sp.conditions} "
            f"conditions, rounded up to a multiple of {sp.cells} cells: {sp.n_total}."
        ),
        "planner": sp.as_dict(),
    }


def plan_build(*, study: Study, sample_size: SampleSizeInput, alpha: float = 0.05) -> dict:
    """The analysis plan of ``study`` as plain JSON data (format ``analysis.deviations.PLAN_FORMAT``).

    Keys: ``format``; ``study`` (slug, title, ``definition_sha256`` of :func:`study_definition`);
    ``design`` (settings, conditions, baseline, survey items, cells); ``alpha``; ``correction``
    (Holm, its families of results sections); ``tests`` (one per hypothesis, from
    :func:`analysis.deviations.planned_tests`); ``descriptive`` (reported sections without a
    test); ``exclusion_rules`` (reason and rule); ``exclusion_scope``; ``sample_size``
    (``planned_n``, ``derivation``, the planner's numbers or None). A study with survey items
    that name a type adds ``design.survey_items_typed`` (each item's key, type, place and its
    type's keys), their tests (:func:`analysis.survey_measures.typed_planned_tests`), their Holm
    families and the descriptive section ``survey_items_summary``; a study without them gets
    the plan it always got. Under a declared codebook the plan adds ``codebook``
    (:func:`analysis.codebook_analysis.planned_codebook`: its fields, outcome, success mapping,
    the outcome's test and the agreement statistics).

    Raises :class:`PlanInputError` if the planned N cannot be determined from ``sample_size``.
    The plan holds no time and no reason, so the same study and options always give the same
    plan and hash.
    """
    from analysis.deviations import DESCRIPTIVE_SECTIONS, PLAN_FORMAT, planned_tests
    from analysis.plan_hash import plan_sha256
    from analysis.pipeline import HOLM_FAMILIES, likert_alternatives_for
    from analysis.survey_measures import TYPED_FAMILIES, typed_planned_tests

    if not 0 < alpha < 1:
        raise PlanInputError(f"--alpha must be strictly between 0 and 1, got {alpha:g}.")
    settings = [s.key for s in main_settings(study)]
    typed = typed_items(study.survey or {})  # items with a type: their own tests and families
    items = [i["key"] for i in (study.survey or {}).get("condition_items", [])
             if i["key"] not in {t["key"] for t in typed}]
    alternatives = likert_alternatives_for(items)
    families = {name: list(sections) for name, sections in
                {**HOLM_FAMILIES, **(TYPED_FAMILIES if typed else {})}.items()}
    plan = {
        "format": PLAN_FORMAT,
        "study": {"slug": study.slug, "title": study.title,
                  "definition_sha256": plan_sha256(study_definition(study))},
        "design": {"settings": settings, "conditions": list(study.conditions),
                   "baseline": "no_pattern", "survey_items": items,
                   "cells": len(study_cells(study))},
        "alpha": alpha,
        "correction": {
            "method": "holm",
            "families": families,
            "description": "Holm (1979) within each family: the identification tests across all "
            "settings and pattern conditions; the Mann-Whitney tests across all items and pattern "
            "conditions; the paired Wilcoxon tests likewise.",
        },
        "tests": planned_tests(settings, study.conditions, items,
                               identification_alternative=IDENTIFICATION_ALTERNATIVE,
                               likert_alternatives=alternatives, families=families),
        "descriptive": list(DESCRIPTIVE_SECTIONS),
        "exclusion_rules": [{"reason": r, "rule": text} for r, text in EXCLUSION_RULES],
        "exclusion_scope": EXCLUSION_SCOPE,
        "sample_size": _sample_size(study, sample_size, alpha),
    }
    if typed:
        # Each typed item with its type and words, and one planned test per comparison.
        plan["design"]["survey_items_typed"] = [
            {k: v for k, v in t.items() if k != "text"} for t in typed]
        plan["tests"] += typed_planned_tests(typed, study.conditions)
        plan["descriptive"].append("survey_items_summary")
    if study.annotation_codebook:  # only a declared one: the default leaves the plan as it was
        from analysis.codebook_analysis import planned_codebook

        plan["codebook"] = planned_codebook(study.annotation_codebook)
    return plan
