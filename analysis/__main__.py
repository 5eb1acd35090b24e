"""Command line: ``python -m analysis DIR --out OUTDIR``, ``python -m analysis plan ...``
and ``python -m analysis simulate ...``.

Exit status 0 on success, 2 on invalid input or arguments (message on
stderr, no traceback). Input that cannot be analysed yet, such as an export
without answers or with unannotated answers, counts as invalid input.
``plan`` and ``simulate`` share one way of printing a result or an error
(:func:`_report`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .design import load_study_design
from .deviations import load_plan
from .errors import AnalysisInputError
from .pipeline import DEFAULT_LIKERT_ALTERNATIVES
from .planning import plan_sample_size
from .run import run_analysis
from .simulation import MAX_RUNS, SimulationResult, simulate_power
from .stats import PROPORTION_ALTERNATIVES, RANK_ALTERNATIVES


def _item_alternative(text: str) -> tuple[str, str]:
    item, sep, alternative = text.partition("=")
    if not sep or not item or alternative not in RANK_ALTERNATIVES:
        raise argparse.ArgumentTypeError(
            f"expected ITEM=ALTERNATIVE with ALTERNATIVE one of {', '.join(RANK_ALTERNATIVES)}; got {text!r}"
        )
    return item, alternative


def build_parser() -> argparse.ArgumentParser:
    """Argument parser of ``python -m analysis``.

    Returns
    -------
    argparse.ArgumentParser
        Positional ``input_dir``; options ``--out`` (required),
        ``--alternative``, ``--likert-alternative ITEM=ALT`` (repeatable),
        ``--alpha`` and ``--plan``.

    Raises
    ------
    None
        Building the parser does not raise; parsing raises ``SystemExit`` (status 2), for
        example when ``--out`` is missing or ``--likert-alternative`` is not ``ITEM=ALT``.

    Notes
    -----
    ``--likert-alternative`` values are parsed into ``(item, alternative)``
    pairs and collected into a dict by :func:`main`.

    References
    ----------
    .. [1] Python documentation, ``argparse``.

    Examples
    --------
    >>> build_parser().parse_args(["export", "--out", "out"]).alternative
    'larger'
    """
    defaults = ", ".join(f"{k}={v}" for k, v in DEFAULT_LIKERT_ALTERNATIVES.items())
    parser = argparse.ArgumentParser(
        prog="python -m analysis",
        description="Analyse a study export (responses.csv, survey.csv): results.json, tables, "
        "figures and a report.",
    )
    parser.add_argument("input_dir", metavar="DIR", help="directory with responses.csv and survey.csv")
    parser.add_argument("--out", required=True, metavar="OUTDIR", help="output directory (created if needed)")
    parser.add_argument("--alternative", choices=PROPORTION_ALTERNATIVES, default="larger",
                        help="alternative of the identification z-tests and Fisher tests (default: larger, "
                        "i.e. higher identification rate with the pattern)")
    parser.add_argument("--likert-alternative", action="append", type=_item_alternative, default=[],
                        metavar="ITEM=ALT",
                        help=f"alternative of the survey tests for one item; repeatable (defaults: {defaults}; "
                        "other items two-sided)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="level of the Wilson intervals (1 - alpha) and the Holm correction (default 0.05)")
    parser.add_argument("--plan", metavar="PLAN_JSON",
                        help="preregistered plan (plan.json of manage.py preregister): the report cites its "
                        "SHA-256 and lists the deviations from it")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line interface.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        0 on success, 2 on invalid input (the message goes to stderr).

    Raises
    ------
    SystemExit
        From argparse on invalid command-line syntax (status 2), such as a missing ``--out``.

    Notes
    -----
    Calls :func:`analysis.run_analysis`; an
    :class:`analysis.AnalysisInputError` becomes ``error: <message>`` on
    stderr and status 2, so researchers see the problem, not a traceback.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Command line".

    Examples
    --------
    >>> main(["export/", "--out", "out/"])  # doctest: +SKIP
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plan"]:
        return plan_main(argv[1:])
    if argv[:1] == ["simulate"]:
        return simulate_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        plan = load_plan(args.plan)[0] if args.plan else None
        results = run_analysis(args.input_dir, args.out, likert_alternatives=dict(args.likert_alternative),
                               alternative=args.alternative, alpha=args.alpha, plan=plan)
    except AnalysisInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Analysed {results['participants']['included']} participants "
          f"({results['participants']['excluded']} excluded); input SHA-256 {results['input_sha256']}")
    if plan is not None:
        prereg = results["preregistration"]
        print(f"Plan SHA-256 {prereg['plan_sha256']}: {prereg['deviations']['count']} deviation(s), "
              "listed in the report")
    print(f"Wrote results.json, tables/, figures/, report.md and report.html to {args.out}")
    return 0


def build_plan_parser() -> argparse.ArgumentParser:
    """Argument parser of ``python -m analysis plan``.

    Returns
    -------
    argparse.ArgumentParser
        Options ``--p-control`` and ``--p-treatment`` (required), ``--alpha``,
        ``--power``, ``--dropout``, ``--cells``, ``--conditions`` and ``--json``.

    Raises
    ------
    None
        Building the parser does not raise; parsing raises ``SystemExit`` (status 2), for
        example when ``--p-control`` is missing or not a number.

    Notes
    -----
    The values are checked by :func:`analysis.planning.plan_sample_size`, so the
    command line and the researcher page give the same messages.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Planning a study".

    Examples
    --------
    >>> build_plan_parser().parse_args(["--p-control", "0.3", "--p-treatment", "0.6"]).power
    0.8
    """
    parser = argparse.ArgumentParser(
        prog="python -m analysis plan",
        description="Participants needed per condition for the one-sided identification test "
        "(statsmodels NormalIndPower, Cohen's h), inflated for dropout, and the total for the cells.",
    )
    parser.add_argument("--p-control", type=float, required=True, metavar="P0",
                        help="expected identification rate without the pattern, in (0, 1)")
    parser.add_argument("--p-treatment", type=float, required=True, metavar="P1",
                        help="expected identification rate with the pattern, in (P0, 1)")
    parser.add_argument("--alpha", type=float, default=0.05, help="one-sided significance level (default 0.05)")
    parser.add_argument("--power", type=float, default=0.8, help="desired power (default 0.8)")
    parser.add_argument("--dropout", type=float, default=0.0, metavar="D",
                        help="expected share of participants lost or excluded, in [0, 1) (default 0)")
    parser.add_argument("--cells", type=int, default=4, metavar="C",
                        help="counterbalancing cells; the total is a multiple of C (default 4, the reference study)")
    parser.add_argument("--conditions", type=int, default=2, metavar="M",
                        help="conditions of the study (default 2: pattern, no_pattern)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def plan_main(argv: Sequence[str]) -> int:
    """Run ``python -m analysis plan``.

    Parameters
    ----------
    argv : sequence of str
        Arguments after ``plan``.

    Returns
    -------
    int
        0 on success, 2 on invalid values (``error: <message>`` on stderr).

    Raises
    ------
    SystemExit
        From argparse on invalid command-line syntax (status 2), such as a missing
        ``--p-treatment``.

    Notes
    -----
    Calls :func:`analysis.planning.plan_sample_size`; ``--json`` prints
    :meth:`SamplePlan.as_dict` as one object.

    References
    ----------
    .. [1] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*, ch. 6.

    Examples
    --------
    >>> plan_main(["--p-control", "0.3", "--p-treatment", "0.6", "--json"])  # doctest: +SKIP
    0
    """
    args = build_plan_parser().parse_args(argv)
    return _report(
        lambda: plan_sample_size(args.p_control, args.p_treatment, alpha=args.alpha, power=args.power,
                                 dropout=args.dropout, cells=args.cells, conditions=args.conditions),
        as_json=args.json, text_lines=_format_plan,
    )


def _format_plan(plan) -> list[str]:
    """The text report of ``plan`` without ``--json``, one string per line."""
    return [
        f"Cohen's h = {plan.cohens_h:.4f} (P0 = {plan.p_control:g}, P1 = {plan.p_treatment:g}, "
        f"one-sided, alpha = {plan.alpha:g}, power = {plan.power:g})",
        f"n per condition:                {plan.n_per_condition}",
        f"n per condition with dropout:   {plan.n_per_condition_with_dropout} (dropout {plan.dropout:g})",
        f"total participants:             {plan.n_total} ({plan.conditions} conditions, "
        f"{plan.cells} cells of {plan.n_per_cell})",
    ]


def build_simulate_parser() -> argparse.ArgumentParser:
    """Argument parser of ``python -m analysis simulate``.

    Returns
    -------
    argparse.ArgumentParser
        ``--study`` (required), ``--p-control`` and ``--p-treatment`` (required),
        ``--dropout``, ``--exclusion-rate``, ``--n``, ``--runs``, ``--seed``, ``--alpha`` and
        ``--json``.

    Raises
    ------
    None
        Building the parser does not raise; parsing raises ``SystemExit`` (status 2), for
        example when ``--study`` is missing or ``--runs`` is not a whole number.

    Examples
    --------
    >>> build_simulate_parser().parse_args(["--study", "s.yaml", "--p-control", "0.3",
    ...                                     "--p-treatment", "0.6"]).runs
    1000
    """
    parser = argparse.ArgumentParser(
        prog="python -m analysis simulate",
        description="Simulated power of the preregistered identification tests for a whole study "
        "design: counterbalancing cells, dropouts that free places, exclusions, one-sided z-tests "
        "per setting and Holm across them.",
    )
    parser.add_argument("--study", required=True, metavar="FILE",
                        help="study file (YAML or JSON), as imported with manage.py import_study")
    parser.add_argument("--p-control", type=float, required=True, metavar="P0",
                        help="identification rate without a pattern, in [0, 1]")
    parser.add_argument("--p-treatment", type=float, required=True, metavar="P1",
                        help="identification rate in a pattern condition, in [0, 1]")
    parser.add_argument("--dropout", type=float, default=0.0, metavar="D",
                        help="probability that a participant drops out and frees the place, in [0, 1) "
                        "(default 0)")
    parser.add_argument("--exclusion-rate", type=float, default=0.0, metavar="E",
                        help="probability that a completed participant is excluded, in [0, 1) (default 0)")
    parser.add_argument("--n", type=int, default=None, metavar="N",
                        help="participants who complete (default: the study's target_sample_size)")
    parser.add_argument("--runs", type=int, default=1000, metavar="R",
                        help=f"simulated studies, 1 to {MAX_RUNS} (default 1000)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="random seed (default: fresh; the seed used is printed)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="family-wise level of the Holm correction (default 0.05)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def _format_simulation(result: SimulationResult) -> list[str]:
    """The text report of ``simulate`` without ``--json``, one string per line."""
    lines = [
        f"Design: {len(result.settings)} main setting(s) x {len(result.conditions)} condition(s) = "
        f"{result.n_cells} cells; N = {result.n} completing; {result.runs} runs, seed {result.seed}",
        f"P0 = {result.p_control:g}, P1 = {result.p_treatment:g}, dropout = {result.dropout:g}, "
        f"exclusion rate = {result.exclusion_rate:g}; one-sided z-tests, Holm across "
        f"{len(result.comparisons)} comparison(s) at alpha = {result.alpha:g}",
        "",
        f"{'setting':<20} {'comparison':<36} {'mean n':>13} {'power':>7} {'MC SE':>7}",
    ]
    for c in result.comparisons:
        label = f"{c['treatment']} vs {c['control']}"
        sizes = f"{c['mean_n_treatment']:.1f}/{c['mean_n_control']:.1f}"
        lines.append(f"{c['setting']:<20} {label:<36} {sizes:>13} {c['power']:>7.3f} {c['mc_se']:>7.3f}")
    lines += [
        "",
        f"All comparisons significant: {result.power_all.power:.3f} (MC SE {result.power_all.mc_se:.3f})",
        f"Any comparison significant:  {result.power_any.power:.3f} (MC SE {result.power_any.mc_se:.3f})",
        f"Analysed participants: {result.mean_analysed:.1f} on average "
        f"({result.min_analysed:.0f} to {result.max_analysed:.0f}); arrivals needed: "
        f"{result.mean_arrivals:.1f} on average, {result.p95_arrivals:.0f} at the 95th percentile",
    ]
    return lines


def simulate_main(argv: Sequence[str]) -> int:
    """Run ``python -m analysis simulate``.

    Parameters
    ----------
    argv : sequence of str
        Arguments after ``simulate``.

    Returns
    -------
    int
        0 on success, 2 on invalid input (``error: <message>`` on stderr, nothing on stdout).

    Raises
    ------
    SystemExit
        From argparse on invalid command-line syntax (status 2), such as a missing ``--study``.

    Notes
    -----
    Reads the study file with :func:`load_study_design` and calls :func:`simulate_power`;
    ``--json`` prints :meth:`SimulationResult.as_dict`.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Simulation-based power".

    Examples
    --------
    >>> simulate_main(["--study", "fixtures/spotlight-replication.yaml", "--p-control", "0.3",
    ...                "--p-treatment", "0.6", "--json"])  # doctest: +SKIP
    0
    """
    args = build_simulate_parser().parse_args(argv)

    def compute():
        design = load_study_design(args.study)
        n = args.n if args.n is not None else design["target_sample_size"]
        if n is None:
            raise AnalysisInputError(f"study file {args.study} has no target_sample_size; give --n")
        return simulate_power(
            design["settings"], design["conditions"], p_control=args.p_control,
            p_treatment=args.p_treatment, n=n, dropout=args.dropout,
            exclusion_rate=args.exclusion_rate, runs=args.runs, seed=args.seed, alpha=args.alpha,
        )

    return _report(compute, as_json=args.json, text_lines=_format_simulation)


def _report(compute, *, as_json: bool, text_lines) -> int:
    """Run ``compute()`` and print its result: one JSON object, or ``text_lines(result)``.

    The common tail of ``plan`` and ``simulate``: an :class:`AnalysisInputError` becomes
    ``error: <message>`` on stderr and status 2; otherwise ``result.as_dict()`` is printed as
    JSON with ``--json``, else the text lines, and the status is 0.
    """
    try:
        result = compute()
    except AnalysisInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.as_dict()) if as_json else "\n".join(text_lines(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
