"""Reads for the machine coder: its agreement with the humans and the non-inferiority decision.

For each single-value label (``identified``, ``surface_difference``, ``no_difference``,
``exclusion``) over all items of the study, and for each model that labelled items:

- ``machine_vs_human``: the machine (``llm:<model>``) against each human annotator;
- ``machine_vs_final``: the machine against the human final labels (agreed or adjudicated;
  never an accepted machine label);
- ``human_vs_human``: each pair of human annotators;

Under a study's declared codebook the labels are its single-value fields (``yes_no``,
``choice``, ``ordinal``; :func:`compared_single_fields`) and ``exclusion``, read from the labels'
``values``; its ``multi_choice`` and ``number`` fields are left out of the decision as tags are.

Each with Cohen's kappa and a paired bootstrap 95% CI
(:func:`analysis.stats.agreement_ci.kappa_with_ci`), and one decision per label
(:func:`analysis.stats.agreement_ci.non_inferiority`). Tags are not part of the decision (see
``docs/annotation.md``). Missing machine labels are missing ratings. Only the real items count
unless asked otherwise (``is_pilot``): the pilot annotation round is reported apart
(:mod:`.pilot_round`).

This module only gathers the ratings from the database; every statistic is computed in
:mod:`analysis.stats.agreement` and :mod:`analysis.stats.agreement_ci`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from analysis.stats import agreement_ci
from analysis.stats.agreement import Agreement
from spotlight_study.studies.models import Study

from . import codebook_labels
from .agreement_rows import SINGLE_VALUE_FIELDS
from .models import MachineCodingJob, MachineLabel
from .selectors import annotator_pseudonyms, human_final, items_with_labels

DEFAULT_MARGIN = 0.1


@dataclass(frozen=True)
class MachineAgreementRow:
    """One comparison on one label: ``comparison`` as in the module docstring; ``rater_a`` and
    ``rater_b`` are names (``llm:<model>``, ``annotator_<n>``, ``final``); ``result`` the
    percent agreement, kappa and alpha of the pair; ``ci`` kappa with its bootstrap CI."""

    model: str
    field: str
    comparison: str
    rater_a: str
    rater_b: str
    result: Agreement
    ci: agreement_ci.KappaCI


@dataclass(frozen=True)
class MachineDecision:
    """The decision for one model and label; ``human_pairs`` is the number of human pairs whose
    kappa was averaged into ``rule.human_kappa``."""

    model: str
    field: str
    rule: agreement_ci.NonInferiority
    human_pairs: int


def _rounds(is_pilot: bool | None) -> Q:
    # None: real and pilot items together (the analysis with --include-pilot).
    return Q() if is_pilot is None else Q(item__is_pilot=is_pilot)


def machine_models(*, study: Study, is_pilot: bool | None = False) -> list[str]:
    """The models with machine labels of ``study``'s real items (``is_pilot=True``: the pilot
    round's; ``None``: either), alphabetical."""
    return sorted(
        set(
            MachineLabel.objects.filter(_rounds(is_pilot), item__study=study).values_list(
                "model", flat=True
            )
        )
    )


#: Declared codebook field types whose values are one category each (kappa fits them).
_SINGLE_TYPES = ("yes_no", "choice", "ordinal")


def compared_single_fields(study: Study) -> tuple[str, ...]:
    """The labels the machine coder is compared on: :data:`~.selectors.SINGLE_VALUE_FIELDS`
    under the default codebook; under a declared one its yes_no, choice and ordinal field keys
    (codebook order), then ``exclusion``."""
    if not codebook_labels.is_declared(study):
        return SINGLE_VALUE_FIELDS
    keys = [f["key"] for f in study.annotation_codebook["fields"] if f["type"] in _SINGLE_TYPES]
    return (*keys, "exclusion")


def _value(label, field: str, declared: set[str]):
    """A label's value of ``field``: a declared codebook field from ``values``, else the column."""
    if label is None:
        return None
    if field in declared:
        return (label.values or {}).get(field)
    return getattr(label, field)


def _pair_rows(model, field, comparison, name_a, name_b, row_a, row_b, *, seed, n_resamples):
    result, ci = agreement_ci.pair_with_kappa_ci(row_a, row_b, seed=seed, n_resamples=n_resamples)
    return MachineAgreementRow(model, field, comparison, name_a, name_b, result, ci)


def machine_agreement(
    *,
    study: Study,
    models: list[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    n_resamples: int = 2000,
    seed: int = 20260101,
    is_pilot: bool | None = False,
) -> tuple[list[MachineAgreementRow], list[MachineDecision]]:
    """The machine coder's agreement rows and decisions (see the module docstring).

    Parameters
    ----------
    models : list of str, optional
        Models to report (default: every model with labels in the study).
    margin : float
        Non-inferiority margin in kappa units, in [0, 1].
    n_resamples, seed : int
        Of the bootstrap; the same seed gives the same intervals.
    is_pilot : bool or None
        ``False`` (default): the real items only; ``True``: the pilot annotation round's;
        ``None``: both together (``analyze --include-pilot``).

    Returns
    -------
    (rows, decisions)
        Rows per model, label: machine x each human, machine x final, then human x human;
        one decision per model and label. Both empty when no model labelled anything.

    Raises
    ------
    ValueError
        If ``margin`` is outside [0, 1] or ``n_resamples`` below 100.

    Notes
    -----
    The human x human reference is the mean of the pairwise Cohen's kappas of the human
    annotators (Light's kappa; R. J. Light 1971, Psychological Bulletin 76(5)); with two
    annotators it is their kappa. Items without a final label are left out of the
    machine x final comparison.
    """
    if not 0 <= margin <= 1:
        raise ValueError("margin must be between 0 and 1.")
    models = machine_models(study=study, is_pilot=is_pilot) if models is None else list(models)
    if not models:
        return [], []
    items = list(items_with_labels(study=study, is_pilot=is_pilot))
    index = {it.pk: i for i, it in enumerate(items)}
    pseudonyms = annotator_pseudonyms(study=study)
    humans = sorted(
        {a.annotator_id for it in items for a in it.annotations.all()},
        key=lambda u: (len(pseudonyms.get(u, "")), pseudonyms.get(u, "")),
    )
    by_item = [{a.annotator_id: a for a in it.annotations.all()} for it in items]
    # Human final labels only: an accepted machine label would be the machine against itself.
    finals = [human_final(getattr(it, "final_label", None)) for it in items]
    machine = {m: [None] * len(items) for m in models}
    for label in MachineLabel.objects.filter(_rounds(is_pilot), item__study=study, model__in=models):
        machine[label.model][index[label.item_id]] = label
    opts = {"seed": seed, "n_resamples": n_resamples}
    single_fields = compared_single_fields(study)
    declared = set(single_fields) - {"exclusion"} if codebook_labels.is_declared(study) else set()
    rows: list[MachineAgreementRow] = []
    decisions: list[MachineDecision] = []
    for model in models:
        name = f"llm:{model}"
        for field in single_fields:
            mrow = [_value(m, field, declared) for m in machine[model]]
            hrows = {u: [_value(b.get(u), field, declared) for b in by_item] for u in humans}
            frow = [_value(f, field, declared) for f in finals]
            for u in humans:
                rows.append(
                    _pair_rows(model, field, "machine_vs_human", name,
                               pseudonyms.get(u, f"annotator_?{u}"), mrow, hrows[u], **opts)
                )
            vs_final = _pair_rows(model, field, "machine_vs_final", name, "final", mrow, frow, **opts)
            rows.append(vs_final)
            human_kappas = []
            for i, u in enumerate(humans):
                for v in humans[i + 1:]:
                    if not any(
                        a is not None and b is not None for a, b in zip(hrows[u], hrows[v])
                    ):
                        continue
                    pair = _pair_rows(
                        model, field, "human_vs_human",
                        pseudonyms.get(u, f"annotator_?{u}"), pseudonyms.get(v, f"annotator_?{v}"),
                        hrows[u], hrows[v], **opts,
                    )
                    rows.append(pair)
                    if pair.ci.kappa.defined:
                        human_kappas.append(pair.ci.kappa.value)
            reference = agreement_ci.mean_pairwise_kappa(human_kappas)
            rule = agreement_ci.non_inferiority(
                field=field, machine_ci_low=vs_final.ci.ci_low, human_kappa=reference, margin=margin
            )
            decisions.append(MachineDecision(model, field, rule, len(human_kappas)))
    return rows, decisions


def machine_coder_summary(
    *,
    study: Study,
    margin: float = DEFAULT_MARGIN,
    n_resamples: int = 2000,
    seed: int = 20260101,
    include_pilot: bool = False,
) -> dict:
    """The machine coder's agreement and decisions as plain data for the analysis report: over
    the real items, or with ``include_pilot`` over the real and pilot items together (as the
    analysis then includes the pilot participants).

    Parameters
    ----------
    margin : float
        Non-inferiority margin in kappa units, in [0, 1].
    n_resamples, seed : int
        Of the bootstrap, as :func:`machine_agreement`.

    Returns
    -------
    dict
        The shape of :func:`analysis.machine_coder.check_machine_coder`: ``margin``,
        ``confidence_level``, ``n_resamples``, ``seed``, ``models`` (empty when the study has no
        machine labels), ``comparisons`` (one per row of :func:`machine_agreement`: kappa and CI
        as floats or None with the reason) and ``decisions`` (one per model and label, with the
        statement in words).

    Raises
    ------
    ValueError
        If ``margin`` or ``n_resamples`` is out of range.
    """
    rows, decisions = machine_agreement(
        study=study, margin=margin, n_resamples=n_resamples, seed=seed,
        is_pilot=None if include_pilot else False,
    )
    return {
        "margin": margin,
        "confidence_level": rows[0].ci.confidence_level if rows else 0.95,
        "n_resamples": n_resamples,
        "seed": seed,
        "models": sorted({d.model for d in decisions}),
        "comparisons": [
            {"model": r.model, "field": r.field, "comparison": r.comparison, "rater_a": r.rater_a,
             "rater_b": r.rater_b, "n_items": r.ci.n_items, "kappa": r.ci.kappa.value,
             "kappa_note": r.ci.kappa.undefined_reason, "ci_low": r.ci.ci_low.value,
             "ci_high": r.ci.ci_high.value, "ci_note": r.ci.ci_low.undefined_reason}
            for r in rows
        ],
        "decisions": [
            {"model": d.model, "field": d.field, "non_inferior": d.rule.non_inferior,
             "machine_ci_low": d.rule.machine_ci_low, "human_kappa": d.rule.human_kappa,
             "human_pairs": d.human_pairs, "margin": d.rule.margin, "statement": d.rule.statement}
            for d in decisions
        ],
    }


def machine_overview(*, study: Study, margin: float = DEFAULT_MARGIN) -> dict:
    """The machine coder's part of the researcher's overview (real items only).

    Returns
    -------
    dict
        ``jobs``: the study's last 10 machine-coding jobs, newest first, as
        ``{"job": MachineCodingJob, "missing": missing labels of its model}``; ``rows`` and
        ``decisions``: as :func:`machine_agreement` with ``margin``; ``margin``.
    """
    rows, decisions = machine_agreement(study=study, margin=margin)
    missing = dict(
        MachineLabel.objects.filter(item__study=study, item__is_pilot=False)
        .values_list("model")
        .annotate(n=Count("pk", filter=Q(status=MachineLabel.Status.MISSING)))
    )
    jobs = MachineCodingJob.objects.filter(study=study).order_by("-created_at")[:10]
    return {
        "jobs": [{"job": j, "missing": missing.get(j.model, 0)} for j in jobs],
        "rows": rows,
        "decisions": decisions,
        "margin": margin,
    }
