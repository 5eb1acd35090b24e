"""Command line: ``python -m analysis DIR --out OUTDIR``.

Exit status 0 on success, 2 on invalid input or arguments (message on
stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import AnalysisInputError
from .pipeline import DEFAULT_LIKERT_ALTERNATIVES, run_analysis
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
        ``--alternative``, ``--likert-alternative ITEM=ALT`` (repeatable)
        and ``--alpha``.

    Raises
    ------
    None
        Building the parser does not raise; parsing raises ``SystemExit``.

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
        From argparse on invalid command-line syntax (status 2).

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
    args = build_parser().parse_args(argv)
    try:
        results = run_analysis(args.input_dir, args.out, likert_alternatives=dict(args.likert_alternative),
                               alternative=args.alternative, alpha=args.alpha)
    except AnalysisInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Analysed {results['participants']['included']} participants "
          f"({results['participants']['excluded']} excluded); input SHA-256 {results['input_sha256']}")
    print(f"Wrote results.json, tables/, figures/, report.md and report.html to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
