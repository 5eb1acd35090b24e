"""The machine coder's agreement as the analysis receives it: shape and checks.

The platform computes the agreement of the machine coder (``manage.py llm_annotate``) with the
human annotators and the final labels, with :mod:`analysis.stats.agreement`, and hands the result
to :func:`analysis.run_analysis` as plain data (``machine_coder=``). This module states that
shape and checks it, so the report can rely on it.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import AnalysisInputError

__all__ = ["COMPARISON_KEYS", "COMPARISONS", "DECISION_KEYS", "check_machine_coder"]

#: The comparisons, in report order.
COMPARISONS = ("machine_vs_human", "machine_vs_final", "human_vs_human")
#: Keys of each comparison row.
COMPARISON_KEYS = ("model", "field", "comparison", "rater_a", "rater_b", "n_items", "kappa",
                   "kappa_note", "ci_low", "ci_high", "ci_note")
#: Keys of each decision.
DECISION_KEYS = ("model", "field", "non_inferior", "machine_ci_low", "human_kappa", "human_pairs",
                 "margin", "statement")


def check_machine_coder(machine_coder: Mapping) -> Mapping:
    """Check the machine coder's agreement data before it enters ``results.json``.

    Parameters
    ----------
    machine_coder : Mapping
        ``margin`` (float in [0, 1], kappa units), ``confidence_level`` (float in (0, 1)),
        ``n_resamples`` and ``seed`` (int, of the bootstrap), ``models`` (list of str; empty when
        the study has no machine labels), ``comparisons`` (list of dict with
        :data:`COMPARISON_KEYS`: ``kappa``, ``ci_low`` and ``ci_high`` are floats or None, with
        the reason in ``kappa_note``/``ci_note``) and ``decisions`` (list of dict with
        :data:`DECISION_KEYS`: ``non_inferior`` is True, False or None for undecided, and
        ``statement`` the decision in words).

    Returns
    -------
    Mapping
        ``machine_coder`` itself.

    Raises
    ------
    AnalysisInputError
        If a key is missing, the margin or confidence level is out of range, or a comparison
        is not one of :data:`COMPARISONS`.

    Examples
    --------
    >>> check_machine_coder({"margin": 0.1, "confidence_level": 0.95, "n_resamples": 2000,
    ...                      "seed": 1, "models": [], "comparisons": [], "decisions": []})["models"]
    []
    """
    if not isinstance(machine_coder, Mapping):
        raise AnalysisInputError("machine_coder must be a mapping")
    required = ("margin", "confidence_level", "n_resamples", "seed", "models", "comparisons",
                "decisions")
    missing = [k for k in required if k not in machine_coder]
    if missing:
        raise AnalysisInputError(f"machine_coder is missing {', '.join(missing)}")
    if not 0 <= float(machine_coder["margin"]) <= 1:
        raise AnalysisInputError(f"machine_coder margin must be in [0, 1], got {machine_coder['margin']!r}")
    if not 0 < float(machine_coder["confidence_level"]) < 1:
        raise AnalysisInputError("machine_coder confidence_level must be between 0 and 1")
    for kind, keys in (("comparisons", COMPARISON_KEYS), ("decisions", DECISION_KEYS)):
        for i, row in enumerate(machine_coder[kind]):
            absent = [k for k in keys if k not in row]
            if absent:
                raise AnalysisInputError(f"machine_coder {kind}[{i}] is missing {', '.join(absent)}")
    unknown = {r["comparison"] for r in machine_coder["comparisons"]} - set(COMPARISONS)
    if unknown:
        raise AnalysisInputError(f"machine_coder has unknown comparison(s) {', '.join(sorted(unknown))}")
    return machine_coder
