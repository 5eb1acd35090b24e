"""The whole run: from an export directory to ``results.json``, tables, figures and report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .checks import check_failures
from .deviations import check_plan, compare_to_plan
from .csv_guard import neutralize_frame
from .plan_hash import canonical_json
from .inputs import load_export
from .machine_coder import check_machine_coder
from .pipeline import HOLM_FAMILIES, compute_results, to_json
from .sample import describe_sample, read_participants
from .survey_measures import TYPED_FAMILIES, item_words
from .tables import build_tables

__all__ = ["run_analysis"]


def run_analysis(
    input_dir: str | Path,
    out_dir: str | Path,
    *,
    likert_alternatives: Mapping[str, str] | None = None,
    alternative: str = "larger",
    alpha: float = 0.05,
    plan: Mapping | None = None,
    machine_coder: Mapping | None = None,
) -> dict:
    """Analyse an export directory and write results, tables, figures and report.

    Parameters
    ----------
    input_dir : str or pathlib.Path
        Directory with ``responses.csv`` and ``survey.csv``, and optionally
        ``participants.csv`` (statuses, consent and completion times, demographics), which
        gives the report's Participants section its figures (``results["sample"]``,
        :func:`analysis.sample.describe_sample`).
    out_dir : str or pathlib.Path
        Output directory; created if needed. Files of earlier runs with the
        same names are overwritten.
    likert_alternatives : mapping of str to str, optional
        Per-item alternatives for the Likert tests; see
        :func:`compute_results`.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        Alternative of the identification tests.
    alpha : float, default 0.05
        Level of the Wilson intervals and of the Holm correction.
    plan : Mapping, optional
        A preregistered plan (:func:`analysis.deviations.load_plan`). The
        tests run as the other arguments say; the plan is compared with them
        afterwards: ``results.json`` gains ``preregistration``
        (``plan_sha256`` and the ``deviations`` of
        :func:`analysis.deviations.compare_to_plan`), the report cites the
        hash and gets the section "Deviations from the preregistered plan",
        and the plan is copied to ``plan.json`` in ``out_dir``.
    machine_coder : Mapping, optional
        The machine coder's agreement and decisions, in the shape documented by
        :func:`analysis.machine_coder.check_machine_coder` (``manage.py analyze`` builds it
        with ``spotlight_study.annotation.machine_agreement.machine_coder_summary``).
        With machine labels (``models`` not empty), ``results.json`` gains
        ``machine_coder`` and the report the section "Machine coder" with the kappas and the
        decisions. With ``models`` empty, the report's section says plainly that there are no
        machine labels and ``results.json`` is unchanged (so it still equals the output of
        ``python -m analysis`` on the same export). Left out (None), neither appears.

    Returns
    -------
    dict
        The content of ``results.json`` after JSON round-tripping (plain
        Python types; undefined numbers are ``None``).

    Raises
    ------
    AnalysisInputError
        If the input is missing or invalid (see
        :func:`analysis.prepare_data`), an argument is out of range,
        ``plan`` is not a plan, or ``machine_coder`` is malformed. Nothing is written in that case.
    OSError
        If the output directory cannot be written.

    Notes
    -----
    Writes into ``out_dir``: ``results.json``; ``tables/<name>.csv`` for
    each table of :func:`build_tables`; ``figures/identification_rate``,
    ``figures/likert`` and ``figures/background`` as ``.png`` and
    ``.svg``; ``report.md`` (links the figures) and ``report.html``
    (self-contained, figures embedded). The output holds no timestamps, so
    the same input and software give the same files.

    References
    ----------
    .. [1] Hedderich et al. (2025). What's the Difference? Supporting Users
       in Identifying the Effects of Prompt and Model Changes Through Token
       Patterns. ACL 2025.

    Examples
    --------
    >>> results = run_analysis("export/", "out/")  # doctest: +SKIP
    >>> sorted(results)[:3]  # doctest: +SKIP
    ['background', 'exclusions', 'holm']
    """
    # Imported here: matplotlib is slow to import and only needed when files are written.
    from .figures import write_figures
    from .report import write_report

    if plan is not None:
        check_plan(plan)
    if machine_coder is not None:
        check_machine_coder(machine_coder)
    data = load_export(input_dir)
    results = compute_results(data, alternative=alternative, likert_alternatives=likert_alternatives,
                              alpha=alpha)
    # The Participants section comes from participants.csv of the same export (optional).
    participants = read_participants(input_dir)
    results["sample"] = describe_sample(data, *participants)
    # The study file's check pages (analysis/checks.py), only when the export has any.
    checks = check_failures(participants[0])
    if checks:
        results["checks"] = checks
    if plan is not None:
        # Typed survey items (analysis/survey_measures.py) add their own Holm families.
        families = {**HOLM_FAMILIES, **(TYPED_FAMILIES if "survey_items_summary" in results else {})}
        deviations = compare_to_plan(plan, json.loads(to_json(results)),
                                     correction={"method": "holm", "families": families})
        results["preregistration"] = {"plan_sha256": deviations["plan_sha256"], "deviations": deviations}
    if machine_coder is not None and machine_coder["models"]:
        results["machine_coder"] = dict(machine_coder)
    tables = build_tables(results, data)

    out = Path(out_dir)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        # Tables hold annotators' tags and setting keys: the exports' formula guard applies.
        neutralize_frame(table).to_csv(out / "tables" / f"{name}.csv", index=False,
                                       lineterminator="\n")
    figures = write_figures(tables, out / "figures", words=item_words(data.survey_items))
    text = to_json(results)
    reported = json.loads(text)
    if machine_coder is not None and not machine_coder["models"]:
        reported["machine_coder"] = json.loads(to_json(machine_coder))  # "No machine labels."
    # The study's own words for the report (never written to results.json).
    reported["survey_words"] = item_words(data.survey_items)
    write_report(reported, tables, figures, out)
    if plan is not None:
        # The exact bytes the hash is computed over: ``sha256sum plan.json`` prints the cited hash.
        (out / "plan.json").write_bytes(canonical_json(plan))
    (out / "results.json").write_text(text, encoding="utf-8")
    return json.loads(text)
