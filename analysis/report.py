"""The written report, in Markdown and self-contained HTML.

The content is built here as one list of blocks (:mod:`analysis.document`), which is
rendered to both formats, so they always say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .document import (
    Bullets,
    Code,
    Data,
    Figure,
    Heading,
    Para,
    Table,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    to_html,
    to_markdown,
)
from .checks import check_blocks
from .figures import AGREEMENT_LABELS, CONDITION_LABELS, FREQUENCY_LABELS, item_label
from .pipeline import HOLM_FAMILIES, section_name
from .report_sample import sample_blocks
from .report_survey import typed_survey_blocks

__all__ = ["NO_IDENTIFICATION_TEST", "identification_undefined_reason", "render_html", "render_markdown",
           "write_report"]


_PROPORTION_H1 = {
    "larger": "one-sided, alternative: the rate with {treat} is larger than without the pattern",
    "smaller": "one-sided, alternative: the rate with {treat} is smaller than without the pattern",
    "two-sided": "two-sided, alternative: the rates differ",
}
_RANK_H1 = {
    "greater": "one-sided, alternative: answers for the setting with {treat} are higher",
    "less": "one-sided, alternative: answers for the setting with {treat} are lower",
    "two-sided": "two-sided, alternative: the answers differ",
}
#: How the report names each pattern condition in running text.
_TREAT_WORDS = {"pattern": "the pattern", "pattern_with_distractors": "pattern and distractors"}


#: What the report says when no identification test can be run (the design compares nothing).
NO_IDENTIFICATION_TEST = ("No test: the data need a condition without a pattern and at least one "
                          "with a pattern to compare.")


def identification_undefined_reason(r: Mapping, treatment: str) -> str | None:
    """Why z and p of one identification comparison are undefined, or ``None`` if they are not.

    ``r`` is one entry of ``results["identification"]`` (or ``..._with_distractors``), whose
    pattern-side group is named ``treatment``; an undefined number is ``None`` there (or NaN). The
    pooled proportion is then 0 or 1, so the z-test's standard error is zero. The report and
    ``manage.py analyze`` give this same reason.
    """
    z = r["z"]
    if z is not None and z == z:  # NaN (results not yet made JSON-ready) is undefined too
        return None
    return (f"all participants in both groups had the same outcome "
            f"(n = {r[f'n_{treatment}']} and {r['n_no_pattern']})")


def _item_text(results: Mapping, item: str) -> str:
    """The survey item's own text, word for word (the key when the export gave no text)."""
    return item_label(item, (results.get("survey_words") or {}).get("items"))


def _scale(results: Mapping, name: str, default: tuple) -> tuple:
    """The study's 5-point scale labels (``agreement`` or ``frequency``), else ``default``."""
    labels = tuple((results.get("survey_words") or {}).get(name) or ())
    return labels if len(labels) == 5 else default


def _family_size(results: Mapping, family: str) -> int:
    """Number of defined tests in a Holm family (the m of the correction)."""
    return sum(1 for section in HOLM_FAMILIES[family] for v in results["holm"][section].values()
               if v["p"] is not None)


# --------------------------------------------------------------------------
# content
# --------------------------------------------------------------------------
def _identification_blocks(results: Mapping, treatment: str) -> list:
    section, treat_words = section_name("identification", treatment), _TREAT_WORDS[treatment]
    blocks: list = []
    family = results["holm"][section]
    m = _family_size(results, "identification")
    rows = []
    for setting, r in results[section].items():
        k, n = r[f"k_{treatment}"], r[f"n_{treatment}"]
        parts = [
            "Setting ", Data(setting),
            (f": with {treat_words}, {k} of {n} participants "
             f"({fmt_pct(r[f'rate_{treatment}'])}, 95% Wilson CI {fmt_ci(r[f'ci_{treatment}'])}) identified the "
             f"target difference; without the pattern, {r['k_no_pattern']} of {r['n_no_pattern']} "
             f"({fmt_pct(r['rate_no_pattern'])}, 95% Wilson CI {fmt_ci(r['ci_no_pattern'])}). "),
            "Two-proportion z-test (normal approximation, pooled variance), "
            + _PROPORTION_H1[r["alternative"]].format(treat=treat_words) + ": ",
        ]
        reason = identification_undefined_reason(r, treatment)
        if reason is not None:
            parts.append(f"undefined, because {reason}. ")
        else:
            parts.append(
                f"z = {fmt_num(r['z'])}, p = {fmt_p(r['p'])}, n = {n} with and {r['n_no_pattern']} without; "
                f"Holm-adjusted across the {m} identification test(s): "
                f"p = {fmt_p(family[setting]['p_holm'])}. "
            )
        parts.append(
            f"Cohen's h = {fmt_num(r['cohens_h'])}. Fisher's exact test with the same alternative: "
            f"p = {fmt_p(r['fisher_p'])}."
        )
        blocks.append(Para(*parts))
        rows.append([
            Data(setting), f"{k}/{n} ({fmt_pct(r[f'rate_{treatment}'])})",
            f"{r['k_no_pattern']}/{r['n_no_pattern']} ({fmt_pct(r['rate_no_pattern'])})",
            fmt_num(r["z"]), fmt_p(r["p"]), fmt_p(family[setting]["p_holm"]), fmt_num(r["cohens_h"]),
            fmt_p(r["fisher_p"]),
        ])
    blocks.append(Table(["Setting", f"With {treat_words}", "Without pattern", "z", "p", "p (Holm)",
                         "Cohen's h", "Fisher p"], rows))
    return blocks


def _likert_blocks(results: Mapping, tables: Mapping[str, pd.DataFrame], treatment: str) -> list:
    section = section_name("likert", treatment)
    paired_section = section_name("likert_paired", treatment)
    treat_words = _TREAT_WORDS[treatment]
    table = tables[section].set_index("item")
    m = _family_size(results, "likert")
    blocks: list = []
    rows = []
    for item, r in results[section].items():
        paired = results[paired_section][item]
        med_t = table.loc[item, f"median_{treatment}"]
        med_np = table.loc[item, "median_no_pattern"]
        p_holm = results["holm"][section][item]["p_holm"]
        blocks.append(Para(
            "Item ", Data(item), " (", Data(_item_text(results, item)), f"), with {treat_words} versus without: "
            f"Mann-Whitney U test, {_RANK_H1[r['alternative']].format(treat=treat_words)}: "
            f"U = {fmt_num(r['U'], 1)}, p = {fmt_p(r['p'])}, n = {r[f'n_{treatment}']} with and "
            f"{r['n_no_pattern']} without the pattern; rank-biserial correlation = {fmt_num(r['rbc'])} (positive: "
            f"higher with {treat_words}); median {med_t:g} with and {med_np:g} without. Holm-adjusted "
            f"across the {m} Mann-Whitney test(s): p = {fmt_p(p_holm)}. "
            f"Wilcoxon signed-rank test on {paired['n_pairs']} pairs "
            f"({paired['n_nonzero']} non-zero differences), same alternative: "
            + (f"W = {fmt_num(paired['W'], 1)}, p = {fmt_p(paired['p'])}."
               if paired["p"] is not None else "undefined (no non-zero difference).")))
        rows.append([Data(item), r["alternative"], fmt_num(r["U"], 1), fmt_p(r["p"]), fmt_p(p_holm), fmt_num(r["rbc"]),
                     str(r[f"n_{treatment}"]), str(r["n_no_pattern"]), fmt_num(paired["W"], 1),
                     fmt_p(paired["p"])])
    blocks.append(Table(["Item", "Alternative", "U", "p", "p (Holm)", "rbc", f"n with {treat_words}",
                         "n without", "Wilcoxon W", "Wilcoxon p"], rows))
    return blocks


def _deviation_blocks(prereg: Mapping) -> list:
    """The section "Deviations from the preregistered plan" (see :func:`analysis.deviations.compare_to_plan`)."""
    dev = prereg["deviations"]
    sample = dev["sample_size"]
    blocks: list = [
        Heading(2, "Deviations from the preregistered plan"),
        Para("Plan SHA-256: ", Code(prereg["plan_sha256"]),
             " (SHA-256 of the plan's canonical JSON: keys sorted, UTF-8, no whitespace; ",
             Code("sha256sum plan.json"), " in this directory prints it). ",
             f"{dev['count']} deviation(s) found." if dev["count"] else "No deviation found."),
    ]
    if sample["planned"] is None:
        n_line = f"N analysed {sample['analysed']} vs planned: the plan states no N."
    elif sample["difference"] == 0:
        n_line = f"N analysed {sample['analysed']} vs planned {sample['planned']} (as planned)."
    else:
        more = "more" if sample["difference"] > 0 else "fewer"
        n_line = (f"N analysed {sample['analysed']} vs planned {sample['planned']} "
                  f"({abs(sample['difference'])} {more} than planned).")
    blocks += [Heading(3, "Sample size"), Para(n_line), Heading(3, "Exclusion rules")]
    blocks.append(Table(["Rule", "In the plan", "Participants excluded"],
                        [[Data(e["reason"]), "yes" if e["planned"] else "no (not planned)",
                           str(e["participants"])] for e in dev["exclusions"]]))
    unplanned = [e for e in dev["exclusions"] if not e["planned"]]
    blocks.append(Para("Exclusion reasons applied but not planned: ",
                       Data(", ".join(f"{e['reason']} ({e['participants']})" for e in unplanned))
                       if unplanned else "None", "."))
    blocks.append(Heading(3, "Tests and alternatives"))
    if dev["tests_differ"]:
        blocks.append(Bullets([[Data(d["id"] or "all tests"), f": {d['what']} planned ",
                                Code(str(d["planned"])), ", used ", Code(str(d["used"]))]
                               for d in dev["tests_differ"]]))
    else:
        blocks.append(Para("Tests or alternatives that differ from the plan: None."))
    blocks.append(Para("Planned tests not run: ",
                       Data(", ".join(dev["tests_not_run"])) if dev["tests_not_run"] else "None", "."))
    blocks.append(Heading(3, "Analyses not in the plan"))
    if dev["exploratory"]:
        blocks.append(Bullets([[Data(name), " (exploratory)"] for name in dev["exploratory"]]))
    else:
        blocks.append(Para("Analyses not in the plan (exploratory): None."))
    return blocks


def _blocks(results: Mapping, tables: Mapping[str, pd.DataFrame]) -> list:
    """The whole report as blocks, section by section."""
    blocks = _header_blocks(results) + sample_blocks(results)
    if results.get("preregistration"):
        blocks += _deviation_blocks(results["preregistration"])
    blocks += _identification_section(results)
    blocks += _time_on_task_blocks(results)
    blocks += _other_difference_blocks(tables)
    blocks += _survey_blocks(results, tables)
    blocks += _background_blocks(results)
    blocks += check_blocks(results)  # the study file's check pages (checks.py)
    blocks += typed_survey_blocks(results)  # items with a type (report_survey.py)
    if "machine_coder" in results:
        blocks += _machine_coder_blocks(results["machine_coder"])
    return blocks + _method_blocks(results)


def _header_blocks(results: Mapping) -> list:
    """Title, the input's fingerprint and, if any, the preregistered plan's hash."""
    blocks: list = [
        Heading(1, "Study analysis report"),
        Para("Input SHA-256: ", Code(results["input_sha256"] or "not available (built from DataFrames)"),
             ". The numbers below come from exactly this input; the fingerprint is the SHA-256 of the "
             "output of ", Code("sha256sum responses.csv survey.csv"),
             ", so it can be checked in the export directory with ",
             Code("sha256sum responses.csv survey.csv | sha256sum"), "."),
    ]
    if results["input_files"]:
        blocks.append(Bullets([[Data(name), ": ", Code(sha)] for name, sha in results["input_files"].items()]))
    prereg = results.get("preregistration")
    if prereg:
        blocks.append(Para("Preregistered plan SHA-256: ", Code(prereg["plan_sha256"]),
                           ". The analysis is compared with this plan in the section "
                           "\"Deviations from the preregistered plan\"."))
    return blocks


def _identification_section(results: Mapping) -> list:
    """Identification of the target difference, per pattern condition, with the figure."""
    design = results["design"]
    condition_words = ", ".join(CONDITION_LABELS.get(c, c) for c in design["conditions"])
    blocks = [
        Heading(2, "Identification of the target difference"),
        Para(f"Share of participants whose answer identified the target difference, per setting "
             f"({len(design['settings'])}) and condition ({condition_words}). Each condition with a "
             "pattern box is compared with the condition without one."),
    ]
    if results["identification"]:
        blocks += _identification_blocks(results, "pattern")
    if results["identification_with_distractors"]:
        if results["identification"]:
            blocks.append(Heading(3, "Pattern with distractors"))
        blocks += [
            Para("The condition in which the target pattern was shown together with distractor "
                 "patterns, compared with the condition without any pattern."),
            *_identification_blocks(results, "pattern_with_distractors"),
        ]
    if not design["compared"]:
        blocks.append(Para(f"{NO_IDENTIFICATION_TEST} Only the rates are shown."))
    blocks.append(Figure("identification_rate", "Identification rate by setting and condition, with 95% "
                                              "Wilson confidence intervals; k/n above each bar."))
    return blocks


def _time_on_task_blocks(results: Mapping) -> list:
    """Time on task per setting and condition."""
    return [
        Heading(2, "Time on task"),
        Para("Time from loading the task page to submitting the answer, measured by the server, in "
             "seconds. SD is the sample standard deviation (undefined for a single participant)."),
        Table(["Setting", "Condition", "n", "Mean (s)", "Median (s)", "SD (s)"],
              [[Data(s), CONDITION_LABELS.get(c, c), str(v["n"]), fmt_num(v["mean_s"], 1),
                fmt_num(v["median_s"], 1), fmt_num(v["sd_s"], 1)]
               for s, by_c in results["time_on_task"].items() for c, v in by_c.items()]),
    ]


def _other_difference_blocks(tables: Mapping[str, pd.DataFrame]) -> list:
    """Shares reporting other differences, or none, per setting and condition."""
    outcomes = tables["outcomes"]
    return [
        Heading(2, "Other differences"),
        Para("Share of participants who reported other, non-systematic differences between the groups, "
             "and share who stated that there was no difference, per setting and condition."),
        Table(["Setting", "Condition", "n", "Other differences", "No difference"],
              [[Data(r.setting), CONDITION_LABELS.get(r.condition, r.condition), str(r.n),
                f"{r.k_other_difference} ({fmt_pct(r.share_other_difference)})",
                f"{r.k_no_difference} ({fmt_pct(r.share_no_difference)})"] for r in outcomes.itertuples()]),
    ]


def _survey_blocks(results: Mapping, tables: Mapping[str, pd.DataFrame]) -> list:
    """The post-task survey: tests per pattern condition, or why there are none, and the figure."""
    design = results["design"]
    blocks: list = [Heading(2, "Post-task survey")]
    if design["survey_compared"]:
        blocks.append(Para(
            "Each participant rated, once for each condition they saw, 5-point items from ",
            Data(_scale(results, "agreement", AGREEMENT_LABELS)[0]), " (1) to ",
            Data(_scale(results, "agreement", AGREEMENT_LABELS)[-1]), " (5). For each condition with a pattern "
            "box, the answers are compared with those about the task without one, with a Mann-Whitney U "
            "test (ordinal data; scipy, with continuity correction), as in the reference study, and, as "
            "a within-subject check, with a Wilcoxon signed-rank test on participants who answered "
            "both."))
        for treatment in (c for c, _ in design["survey_compared"]):
            if treatment != "pattern" and len(design["survey_compared"]) > 1:
                blocks.append(Heading(3, "Survey: pattern with distractors"))
            blocks += _likert_blocks(results, tables, treatment)
    elif results["likert_distribution"]:
        blocks.append(Para("No test: the survey needs answers about a task without a pattern and about "
                           "one with a pattern to compare. Only the distributions are shown."))
    elif not results.get("survey_items_summary"):  # typed items have their own section
        blocks.append(Para("No per-condition survey answers from included participants."))
    blocks.append(Figure("likert", "Survey answers by condition as diverging stacked bars: disagreement "
                               "to the left of zero, agreement to the right, neutral split across zero."))
    return blocks


def _background_blocks(results: Mapping) -> list:
    """Background answers, shown as distributions only."""
    blocks: list = [Heading(2, "Background")]
    if results["background"]:
        blocks.append(Para("How often participants did each activity in the last 12 months (shown as "
                           "distributions only; not tested)."))
        blocks.append(Table(["Item", *_scale(results, "frequency", FREQUENCY_LABELS), "n"],
                            [[Data(_item_text(results, item)), *(str(c[str(level)]) for level in range(1, 6)), str(c["n"])]
                             for item, c in results["background"].items()]))
    else:
        blocks.append(Para("No background answers from included participants."))
    blocks.append(Figure("background", "Distribution of the background answers."))
    return blocks


def _machine_coder_blocks(mc: Mapping) -> list:
    """The machine coder's agreement with the humans and the non-inferiority decision per label.

    ``mc`` has the shape of :func:`analysis.machine_coder.check_machine_coder`.
    """
    blocks: list = [Heading(2, "Machine coder")]
    if not mc["models"]:
        return blocks + [Para("No machine labels: no machine coder (", Code("manage.py llm_annotate"),
                              ") has labelled this study's answers, so there is no machine agreement and "
                              "no decision.")]
    level = f"{100 * mc['confidence_level']:g}%"
    blocks.append(Para(
        "For each label, Cohen's kappa with a paired bootstrap ", level, " confidence interval (scipy ",
        Code("bootstrap"), f", percentile, {mc['n_resamples']} resamples, seed {mc['seed']}) of the machine "
        "coder against each human annotator and against the final labels, and of the human annotators "
        "with each other, over the items both rated. Decision rule: the machine coder is non-inferior to a "
        "second human coder on a label if the lower bound of kappa(machine, final) is at least the human x "
        f"human kappa minus the margin ({mc['margin']:g}; the mean over pairs with more than two annotators). "
        "This checks the coding; it is not one of the study's tests."))
    for model in mc["models"]:
        rows = [[Data(r["field"]), r["comparison"], [Data(r["rater_a"]), " x ", Data(r["rater_b"])],
                 str(r["n_items"]), _kappa(r["kappa"], r["kappa_note"]), _interval(r)]
                for r in mc["comparisons"] if r["model"] == model]
        decisions = [[Data(d["statement"])] for d in mc["decisions"] if d["model"] == model]
        blocks += [Heading(3, f"Model {model}"),
                   Table(["Label", "Comparison", "Raters", "n", "Cohen's kappa", f"{level} CI"], rows),
                   Para("Decision per label:"), Bullets(decisions)]
    return blocks


def _kappa(value, note: str) -> str:
    return f"undefined ({note})" if value is None else f"{value:.3f}"


def _interval(row: Mapping) -> str:
    if row["ci_low"] is None or row["ci_high"] is None:
        return f"none ({row['ci_note']})"
    return f"{row['ci_low']:.3f} to {row['ci_high']:.3f}"


def _method_blocks(results: Mapping) -> list:
    """The methods, with the library call behind every number, and the software versions."""
    sw = results["software"]
    params = results["parameters"]
    return [
        Heading(2, "Methods"),
        Bullets([
            ["Identification: statsmodels ", Code("proportions_ztest"), " (pooled variance), Wilson intervals (",
             Code("proportion_confint(method='wilson')"), f", {100 * (1 - params['alpha']):.0f}%), Cohen's h (",
             Code("proportion_effectsize"), "), scipy ", Code("fisher_exact"), "."],
            ["Survey: scipy ", Code("mannwhitneyu(x=with_pattern, y=no_pattern)"),
             "; rank-biserial correlation 2U/(n1 n2) - 1 (Kerby 2014); scipy ", Code("wilcoxon"),
             (" on per-participant pairs, zero differences dropped; W is the rank sum of positive differences "
              "(pattern minus no pattern) for one-sided tests and the smaller rank sum for two-sided tests.")],
            ["Holm correction (statsmodels ", Code("multipletests(method='holm')"),
             (f", alpha = {params['alpha']}) within each family: the identification tests across every "
              "setting and every pattern condition compared with no pattern, the Mann-Whitney tests across "
              "every item and pattern condition, and the Wilcoxon tests likewise. "
              "Reported p-values are unadjusted unless marked Holm.")],
            ["Software: " + ", ".join(f"{name} {version}" for name, version in sw.items()) + "."],
            ["Tables behind every number are in ", Code("tables/"), "; all numbers are in ", Code("results.json"), "."],
        ]),
    ]


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------
def render_markdown(results: Mapping, tables: Mapping[str, pd.DataFrame],
                    figures: Mapping[str, Mapping[str, Path]], base_dir: str | Path) -> str:
    """Render the report as Markdown.

    Parameters
    ----------
    results : Mapping
        ``results.json`` content with undefined numbers as None (for
        example ``json.loads(analysis.to_json(results))``).
    tables : mapping of str to pandas.DataFrame
        From :func:`analysis.build_tables`.
    figures : mapping
        ``{name: {"png": Path, "svg": Path}}`` from
        :func:`analysis.figures.write_figures`.
    base_dir : str or pathlib.Path
        Directory the report will be saved in; figure links are relative to
        it.

    Returns
    -------
    str
        GitHub-flavoured Markdown; figures are linked (SVG shown, PNG
        linked).

    Raises
    ------
    KeyError
        If a section of ``results`` or a table is missing.

    Notes
    -----
    Data-derived text is backslash-escaped, so a setting named ``a|b``
    cannot break a table.

    References
    ----------
    .. [1] GitHub Flavored Markdown Spec, version 0.29.

    Examples
    --------
    >>> text = render_markdown(results, tables, figures, "out/")  # doctest: +SKIP
    >>> text.splitlines()[0]  # doctest: +SKIP
    '# Study analysis report'
    """
    return to_markdown(_blocks(results, tables), figures, base_dir)


def render_html(results: Mapping, tables: Mapping[str, pd.DataFrame],
                figures: Mapping[str, Mapping[str, Path]], base_dir: str | Path) -> str:
    """Render the report as one self-contained HTML page.

    Parameters
    ----------
    results, tables : Mapping
        As in :func:`render_markdown`.
    figures : mapping
        ``{name: {"png": Path, "svg": Path}}``; the PNG files must exist.
    base_dir : str or pathlib.Path
        Directory the report will be saved in; the SVG links are relative to
        it.

    Returns
    -------
    str
        An HTML5 document. Each figure's PNG is embedded as a base64
        ``data:`` URI, so the page can be served or mailed on its own; a
        link to the SVG is added next to it.

    Raises
    ------
    KeyError
        If a section of ``results`` or a table is missing.
    OSError
        If a PNG cannot be read.

    Notes
    -----
    All text is escaped with :func:`html.escape`; the page loads nothing
    from the network.

    References
    ----------
    .. [1] WHATWG HTML Living Standard, "The img element".

    Examples
    --------
    >>> page = render_html(results, tables, figures, "out/")  # doctest: +SKIP
    >>> page.startswith("<!DOCTYPE html>")  # doctest: +SKIP
    True
    """
    return to_html(_blocks(results, tables), figures, base_dir)


def write_report(results: Mapping, tables: Mapping[str, pd.DataFrame],
                 figures: Mapping[str, Mapping[str, Path]], out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``.

    Parameters
    ----------
    results, tables : Mapping
        As in :func:`render_markdown`.
    figures : mapping
        From :func:`analysis.figures.write_figures`, with files under
        ``out_dir``.
    out_dir : str or pathlib.Path
        Output directory (must exist).

    Returns
    -------
    dict of str to pathlib.Path
        ``{"md": path, "html": path}``.

    Raises
    ------
    OSError
        If a file cannot be written or a figure read.

    Notes
    -----
    See :func:`render_markdown` and :func:`render_html`.

    References
    ----------
    .. [1] Issue 4, "analysis/": report contents.

    Examples
    --------
    >>> write_report(results, tables, figures, "out/")["md"].name  # doctest: +SKIP
    'report.md'
    """
    out = Path(out_dir)
    md, page = out / "report.md", out / "report.html"
    md.write_text(render_markdown(results, tables, figures, out), encoding="utf-8")
    page.write_text(render_html(results, tables, figures, out), encoding="utf-8")
    return {"md": md, "html": page}
