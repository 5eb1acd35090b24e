"""Reads for the machine coder: its agreement with the humans and the non-inferiority decision.

For each single-value label (``identified``, ``surface_difference``, ``no_difference``,
``exclusion``) over all items of the study, and for each model that labelled items:

- ``machine_vs_human``: the machine (``llm:<model>``) against each human annotator;
- ``machine_vs_final``: the machine against the final labels (agreed or adjudicated);
- ``human_vs_human``: each pair of human annotators;

each with Cohen's kappa and a paired bootstrap 95% CI
(:func:`~.agreement.kappa_with_ci`), and one decision per label
(:func:`~.agreement.non_inferiority`). Tags are not part of the decision (see
``docs/annotation.md``). Missing machine labels are missing ratings.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean

from django.db.models import Count, Q

from spotlight_study.studies.models import Study

from . import agreement as stats
from .models import MachineCodingJob, MachineLabel
from .selectors import SINGLE_VALUE_FIELDS, annotator_pseudonyms, items_with_labels

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
    result: stats.Agreement
    ci: stats.KappaCI


@dataclass(frozen=True)
class MachineDecision:
    """The decision for one model and label; ``human_pairs`` is the number of human pairs whose
    kappa was averaged into ``rule.human_kappa``."""

    model: str
    field: str
    rule: stats.NonInferiority
    human_pairs: int


def machine_models(*, study: Study) -> list[str]:
    """The models with machine labels in ``study``, alphabetical."""
    return sorted(
        set(MachineLabel.objects.filter(item__study=study).values_list("model", flat=True))
    )


def _pair_rows(model, field, comparison, name_a, name_b, row_a, row_b, *, seed, n_resamples):
    both = [a is not None and b is not None for a, b in zip(row_a, row_b, strict=True)]
    common_a = [a if k else None for a, k in zip(row_a, both)]
    common_b = [b if k else None for b, k in zip(row_b, both)]
    return MachineAgreementRow(
        model,
        field,
        comparison,
        name_a,
        name_b,
        stats.agreement([common_a, common_b]),
        stats.kappa_with_ci(common_a, common_b, seed=seed, n_resamples=n_resamples),
    )


def machine_agreement(
    *,
    study: Study,
    models: list[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    n_resamples: int = 2000,
    seed: int = 20260101,
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
    models = machine_models(study=study) if models is None else list(models)
    if not models:
        return [], []
    items = list(items_with_labels(study=study))
    index = {it.pk: i for i, it in enumerate(items)}
    pseudonyms = annotator_pseudonyms(study=study)
    humans = sorted(
        {a.annotator_id for it in items for a in it.annotations.all()},
        key=lambda u: (len(pseudonyms.get(u, "")), pseudonyms.get(u, "")),
    )
    by_item = [{a.annotator_id: a for a in it.annotations.all()} for it in items]
    finals = [getattr(it, "final_label", None) for it in items]
    machine = {m: [None] * len(items) for m in models}
    for label in MachineLabel.objects.filter(item__study=study, model__in=models):
        machine[label.model][index[label.item_id]] = label
    opts = {"seed": seed, "n_resamples": n_resamples}
    rows: list[MachineAgreementRow] = []
    decisions: list[MachineDecision] = []
    for model in models:
        name = f"llm:{model}"
        for field in SINGLE_VALUE_FIELDS:
            mrow = [None if m is None else getattr(m, field) for m in machine[model]]
            hrows = {
                u: [getattr(b[u], field) if u in b else None for b in by_item] for u in humans
            }
            frow = [None if f is None else getattr(f, field) for f in finals]
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
            reference = (
                stats.Statistic(fmean(human_kappas))
                if human_kappas
                else stats.Statistic(None, "no pair of human annotators has a defined kappa")
            )
            rule = stats.non_inferiority(
                field=field, machine_ci_low=vs_final.ci.ci_low, human_kappa=reference, margin=margin
            )
            decisions.append(MachineDecision(model, field, rule, len(human_kappas)))
    return rows, decisions


def machine_overview(*, study: Study, margin: float = DEFAULT_MARGIN) -> dict:
    """The machine coder's part of the researcher's overview.

    Returns
    -------
    dict
        ``jobs``: the study's last 10 machine-coding jobs, newest first, as
        ``{"job": MachineCodingJob, "missing": missing labels of its model}``; ``rows`` and
        ``decisions``: as :func:`machine_agreement` with ``margin``; ``margin``.
    """
    rows, decisions = machine_agreement(study=study, margin=margin)
    missing = dict(
        MachineLabel.objects.filter(item__study=study)
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
