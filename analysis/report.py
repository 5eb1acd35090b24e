"""The written report, in Markdown and self-contained HTML.

Both formats are rendered from one list of blocks, so they always say the
same thing. Values that come from the data (setting names, items, exclusion
reasons) are escaped for each format.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from .figures import AGREEMENT_LABELS, CONDITION_LABELS, FREQUENCY_LABELS, item_label
from .pipeline import HOLM_FAMILIES, section_name

__all__ = ["render_html", "render_markdown", "write_report"]


# --------------------------------------------------------------------------
# a tiny document model
# --------------------------------------------------------------------------
class _U(str):
    """Text taken from the data: escaped in Markdown as well as in HTML."""


class _C(str):
    """Inline code (hashes, commands)."""


class _Heading:
    def __init__(self, level: int, text: str):
        self.level, self.text = level, text


class _Para:
    def __init__(self, *parts: str):
        self.parts = parts


class _Bullets:
    def __init__(self, items: Sequence[Sequence[str]]):
        self.items = items


class _Table:
    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[str]]):
        self.headers, self.rows = headers, rows


class _Fig:
    def __init__(self, name: str, caption: str):
        self.name, self.caption = name, caption


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md_inline(parts: Sequence[str], *, in_table: bool = False) -> str:
    out = []
    for part in parts:
        if isinstance(part, _U):
            out.append(_MD_SPECIAL.sub(r"\\\1", part))  # escapes "|" too
            continue
        if isinstance(part, _C):
            part = f"`{part.replace('`', '')}`"
        # A pipe ends a table cell even inside backticks unless escaped (GFM).
        out.append(part.replace("|", "\\|") if in_table else part)
    return "".join(out)


def _html_inline(parts: Sequence[str]) -> str:
    return "".join(
        f"<code>{html.escape(p)}</code>" if isinstance(p, _C) else html.escape(p) for p in parts
    )


def _as_parts(cell) -> Sequence[str]:
    return cell if isinstance(cell, (list, tuple)) else (cell,)


# --------------------------------------------------------------------------
# formatting numbers in words
# --------------------------------------------------------------------------
def _p(p) -> str:
    if p is None:
        return "undefined"
    if p >= 0.01:
        return f"{p:.3f}"
    if p >= 0.001:
        return f"{p:.4f}"
    return f"{p:.1e}"


def _num(x, digits: int = 2) -> str:
    return "undefined" if x is None else f"{x:.{digits}f}"


def _pct(x) -> str:
    return "undefined" if x is None else f"{100 * x:.1f}%"


def _ci(ci) -> str:
    return f"{_pct(ci[0])} to {_pct(ci[1])}"


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
            "Setting ", _U(setting),
            (f": with {treat_words}, {k} of {n} participants "
             f"({_pct(r[f'rate_{treatment}'])}, 95% Wilson CI {_ci(r[f'ci_{treatment}'])}) identified the "
             f"target difference; without the pattern, {r['k_no_pattern']} of {r['n_no_pattern']} "
             f"({_pct(r['rate_no_pattern'])}, 95% Wilson CI {_ci(r['ci_no_pattern'])}). "),
            "Two-proportion z-test (normal approximation, pooled variance), "
            + _PROPORTION_H1[r["alternative"]].format(treat=treat_words) + ": ",
        ]
        if r["z"] is None:
            parts.append(
                f"undefined, because all participants in both groups had the same outcome "
                f"(n = {n} and {r['n_no_pattern']}). "
            )
        else:
            parts.append(
                f"z = {_num(r['z'])}, p = {_p(r['p'])}, n = {n} with and {r['n_no_pattern']} without; "
                f"Holm-adjusted across the {m} identification test(s): "
                f"p = {_p(family[setting]['p_holm'])}. "
            )
        parts.append(
            f"Cohen's h = {_num(r['cohens_h'])}. Fisher's exact test with the same alternative: "
            f"p = {_p(r['fisher_p'])}."
        )
        blocks.append(_Para(*parts))
        rows.append([
            _U(setting), f"{k}/{n} ({_pct(r[f'rate_{treatment}'])})",
            f"{r['k_no_pattern']}/{r['n_no_pattern']} ({_pct(r['rate_no_pattern'])})",
            _num(r["z"]), _p(r["p"]), _p(family[setting]["p_holm"]), _num(r["cohens_h"]),
            _p(r["fisher_p"]),
        ])
    blocks.append(_Table(["Setting", f"With {treat_words}", "Without pattern", "z", "p", "p (Holm)",
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
        blocks.append(_Para(
            "Item ", _U(item), " (", _U(item_label(item)), f"), with {treat_words} versus without: "
            f"Mann-Whitney U test, {_RANK_H1[r['alternative']].format(treat=treat_words)}: "
            f"U = {_num(r['U'], 1)}, p = {_p(r['p'])}, n = {r[f'n_{treatment}']} with and "
            f"{r['n_no_pattern']} without the pattern; rank-biserial correlation = {_num(r['rbc'])} (positive: "
            f"higher with {treat_words}); median {med_t:g} with and {med_np:g} without. Holm-adjusted "
            f"across the {m} Mann-Whitney test(s): p = {_p(p_holm)}. "
            f"Wilcoxon signed-rank test on {paired['n_pairs']} pairs "
            f"({paired['n_nonzero']} non-zero differences), same alternative: "
            + (f"W = {_num(paired['W'], 1)}, p = {_p(paired['p'])}."
               if paired["p"] is not None else "undefined (no non-zero difference).")))
        rows.append([_U(item), r["alternative"], _num(r["U"], 1), _p(r["p"]), _p(p_holm), _num(r["rbc"]),
                     str(r[f"n_{treatment}"]), str(r["n_no_pattern"]), _num(paired["W"], 1),
                     _p(paired["p"])])
    blocks.append(_Table(["Item", "Alternative", "U", "p", "p (Holm)", "rbc", f"n with {treat_words}",
                         "n without", "Wilcoxon W", "Wilcoxon p"], rows))
    return blocks


def _deviation_blocks(prereg: Mapping) -> list:
    """The section "Deviations from the preregistered plan" (see :func:`analysis.deviations.compare_to_plan`)."""
    dev = prereg["deviations"]
    sample = dev["sample_size"]
    blocks: list = [
        _Heading(2, "Deviations from the preregistered plan"),
        _Para("Plan SHA-256: ", _C(prereg["plan_sha256"]),
              " (SHA-256 of the plan's canonical JSON: keys sorted, UTF-8, no whitespace; ",
              _C("sha256sum plan.json"), " in this directory prints it). ",
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
    blocks += [_Heading(3, "Sample size"), _Para(n_line), _Heading(3, "Exclusion rules")]
    blocks.append(_Table(["Rule", "In the plan", "Participants excluded"],
                         [[_U(e["reason"]), "yes" if e["planned"] else "no (not planned)",
                           str(e["participants"])] for e in dev["exclusions"]]))
    unplanned = [e for e in dev["exclusions"] if not e["planned"]]
    blocks.append(_Para("Exclusion reasons applied but not planned: ",
                        _U(", ".join(f"{e['reason']} ({e['participants']})" for e in unplanned))
                        if unplanned else "None", "."))
    blocks.append(_Heading(3, "Tests and alternatives"))
    if dev["tests_differ"]:
        blocks.append(_Bullets([[_U(d["id"] or "all tests"), f": {d['what']} planned ",
                                 _C(str(d["planned"])), ", used ", _C(str(d["used"]))]
                                for d in dev["tests_differ"]]))
    else:
        blocks.append(_Para("Tests or alternatives that differ from the plan: None."))
    blocks.append(_Para("Planned tests not run: ",
                        _U(", ".join(dev["tests_not_run"])) if dev["tests_not_run"] else "None", "."))
    blocks.append(_Heading(3, "Analyses not in the plan"))
    if dev["exploratory"]:
        blocks.append(_Bullets([[_U(name), " (exploratory)"] for name in dev["exploratory"]]))
    else:
        blocks.append(_Para("Analyses not in the plan (exploratory): None."))
    return blocks


def _blocks(results: Mapping, tables: Mapping[str, pd.DataFrame]) -> list:
    part = results["participants"]
    blocks: list = [
        _Heading(1, "Study analysis report"),
        _Para("Input SHA-256: ", _C(results["input_sha256"] or "not available (built from DataFrames)"),
             ". The numbers below come from exactly this input; the fingerprint is the SHA-256 of the "
             "output of ", _C("sha256sum responses.csv survey.csv"),
             ", so it can be checked in the export directory with ",
             _C("sha256sum responses.csv survey.csv | sha256sum"), "."),
    ]
    if results["input_files"]:
        blocks.append(_Bullets([[_U(name), ": ", _C(sha)] for name, sha in results["input_files"].items()]))
    prereg = results.get("preregistration")
    if prereg:
        blocks.append(_Para("Preregistered plan SHA-256: ", _C(prereg["plan_sha256"]),
                            ". The analysis is compared with this plan in the section "
                            "\"Deviations from the preregistered plan\"."))

    # participants
    blocks += [
        _Heading(2, "Participants and exclusions"),
        _Para(f"{part['total']} participants appear in the data; {part['excluded']} were excluded and "
             f"{part['included']} are analysed. An excluded participant is removed from every test and "
             "every descriptive statistic, in every setting and in the survey."),
    ]
    if results["exclusions"]:
        blocks.append(_Table(["Reason", "Participants"],
                            [[_U(reason), str(count)] for reason, count in results["exclusions"].items()]))
    else:
        blocks.append(_Para("No participant was excluded."))
    if prereg:
        blocks += _deviation_blocks(prereg)

    # identification
    design = results["design"]
    condition_words = ", ".join(CONDITION_LABELS.get(c, c) for c in design["conditions"])
    blocks += [
        _Heading(2, "Identification of the target difference"),
        _Para(f"Share of participants whose answer identified the target difference, per setting "
             f"({len(design['settings'])}) and condition ({condition_words}). Each condition with a "
             "pattern box is compared with the condition without one."),
    ]
    if results["identification"]:
        blocks += _identification_blocks(results, "pattern")
    if results["identification_with_distractors"]:
        if results["identification"]:
            blocks.append(_Heading(3, "Pattern with distractors"))
        blocks += [
            _Para("The condition in which the target pattern was shown together with distractor "
                 "patterns, compared with the condition without any pattern."),
            *_identification_blocks(results, "pattern_with_distractors"),
        ]
    if not design["compared"]:
        blocks.append(_Para("No test: the data need a condition without a pattern and at least one "
                           "with a pattern to compare. Only the rates are shown."))
    blocks.append(_Fig("identification_rate", "Identification rate by setting and condition, with 95% "
                                              "Wilson confidence intervals; k/n above each bar."))

    # time on task
    blocks += [
        _Heading(2, "Time on task"),
        _Para("Time from loading the task page to submitting the answer, measured by the server, in "
             "seconds. SD is the sample standard deviation (undefined for a single participant)."),
        _Table(["Setting", "Condition", "n", "Mean (s)", "Median (s)", "SD (s)"],
              [[_U(s), CONDITION_LABELS.get(c, c), str(v["n"]), _num(v["mean_s"], 1),
                _num(v["median_s"], 1), _num(v["sd_s"], 1)]
               for s, by_c in results["time_on_task"].items() for c, v in by_c.items()]),
    ]

    # other differences
    outcomes = tables["outcomes"]
    blocks += [
        _Heading(2, "Other differences"),
        _Para("Share of participants who reported other, non-systematic differences between the groups, "
             "and share who stated that there was no difference, per setting and condition."),
        _Table(["Setting", "Condition", "n", "Other differences", "No difference"],
              [[_U(r.setting), CONDITION_LABELS.get(r.condition, r.condition), str(r.n),
                f"{r.k_other_difference} ({_pct(r.share_other_difference)})",
                f"{r.k_no_difference} ({_pct(r.share_no_difference)})"] for r in outcomes.itertuples()]),
    ]

    # survey
    blocks.append(_Heading(2, "Post-task survey"))
    if design["survey_compared"]:
        blocks.append(_Para(
            "Each participant rated, once for each condition they saw, 5-point items from "
            f"{AGREEMENT_LABELS[0]} (1) to {AGREEMENT_LABELS[-1]} (5). For each condition with a pattern "
            "box, the answers are compared with those about the task without one, with a Mann-Whitney U "
            "test (ordinal data; scipy, with continuity correction), as in the reference study, and, as "
            "a within-subject check, with a Wilcoxon signed-rank test on participants who answered "
            "both."))
        for treatment in (c for c, _ in design["survey_compared"]):
            if treatment != "pattern" and len(design["survey_compared"]) > 1:
                blocks.append(_Heading(3, "Survey: pattern with distractors"))
            blocks += _likert_blocks(results, tables, treatment)
    elif results["likert_distribution"]:
        blocks.append(_Para("No test: the survey needs answers about a task without a pattern and about "
                           "one with a pattern to compare. Only the distributions are shown."))
    else:
        blocks.append(_Para("No per-condition survey answers from included participants."))
    blocks.append(_Fig("likert", "Survey answers by condition as diverging stacked bars: disagreement "
                               "to the left of zero, agreement to the right, neutral split across zero."))

    # background
    blocks.append(_Heading(2, "Background"))
    if results["background"]:
        blocks.append(_Para("How often participants did each activity in the last 12 months (shown as "
                           "distributions only; not tested)."))
        blocks.append(_Table(["Item", *FREQUENCY_LABELS, "n"],
                            [[_U(item_label(item)), *(str(c[str(level)]) for level in range(1, 6)), str(c["n"])]
                             for item, c in results["background"].items()]))
    else:
        blocks.append(_Para("No background answers from included participants."))
    blocks.append(_Fig("background", "Distribution of the background answers."))

    # methods
    sw = results["software"]
    params = results["parameters"]
    blocks += [
        _Heading(2, "Methods"),
        _Bullets([
            ["Identification: statsmodels ", _C("proportions_ztest"), " (pooled variance), Wilson intervals (",
             _C("proportion_confint(method='wilson')"), f", {100 * (1 - params['alpha']):.0f}%), Cohen's h (",
             _C("proportion_effectsize"), "), scipy ", _C("fisher_exact"), "."],
            ["Survey: scipy ", _C("mannwhitneyu(x=with_pattern, y=no_pattern)"),
             "; rank-biserial correlation 2U/(n1 n2) - 1 (Kerby 2014); scipy ", _C("wilcoxon"),
             (" on per-participant pairs, zero differences dropped; W is the rank sum of positive differences "
              "(pattern minus no pattern) for one-sided tests and the smaller rank sum for two-sided tests.")],
            ["Holm correction (statsmodels ", _C("multipletests(method='holm')"),
             (f", alpha = {params['alpha']}) within each family: the identification tests across every "
              "setting and every pattern condition compared with no pattern, the Mann-Whitney tests across "
              "every item and pattern condition, and the Wilcoxon tests likewise. "
              "Reported p-values are unadjusted unless marked Holm.")],
            ["Software: " + ", ".join(f"{name} {version}" for name, version in sw.items()) + "."],
            ["Tables behind every number are in ", _C("tables/"), "; all numbers are in ", _C("results.json"), "."],
        ]),
    ]
    return blocks


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------
def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


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
    base = Path(base_dir)
    lines: list[str] = []
    for block in _blocks(results, tables):
        if isinstance(block, _Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, _Para):
            lines += [_md_inline(block.parts), ""]
        elif isinstance(block, _Bullets):
            lines += [f"- {_md_inline(item)}" for item in block.items] + [""]
        elif isinstance(block, _Table):
            cell = lambda c: _md_inline(_as_parts(c), in_table=True)
            lines.append("| " + " | ".join(cell(h) for h in block.headers) + " |")
            lines.append("|" + "|".join("---" for _ in block.headers) + "|")
            lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, _Fig):
            paths = figures[block.name]
            lines += [f"![{block.caption}]({_relative(paths['svg'], base)})", "",
                      f"*{block.caption}* ([PNG]({_relative(paths['png'], base)}))", ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #555; }
code { font-size: 0.85rem; word-break: break-all; }
"""


def render_html(results: Mapping, tables: Mapping[str, pd.DataFrame],
                figures: Mapping[str, Mapping[str, Path]], base_dir: str | Path) -> str:
    """Render the report as one self-contained HTML page.

    Parameters
    ----------
    results : Mapping
        ``results.json`` content with undefined numbers as None.
    tables : mapping of str to pandas.DataFrame
        From :func:`analysis.build_tables`.
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
    base = Path(base_dir)
    body: list[str] = []
    for block in _blocks(results, tables):
        if isinstance(block, _Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, _Para):
            body.append(f"<p>{_html_inline(block.parts)}</p>")
        elif isinstance(block, _Bullets):
            body.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, _Table):
            head = "".join(f"<th>{_html_inline(_as_parts(h))}</th>" for h in block.headers)
            rows = "".join("<tr>" + "".join(f"<td>{_html_inline(_as_parts(c))}</td>" for c in row) + "</tr>"
                           for row in block.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(block, _Fig):
            paths = figures[block.name]
            data = base64.b64encode(Path(paths["png"]).read_bytes()).decode("ascii")
            caption = html.escape(block.caption)
            svg = html.escape(_relative(paths["svg"], base))
            body.append(
                f'<figure id="fig-{block.name}"><img src="data:image/png;base64,{data}" alt="{caption}">'
                f'<figcaption>{caption} (<a href="{svg}">SVG</a>)</figcaption></figure>'
            )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>Study analysis report</title>\n<style>" + _CSS + "</style>\n</head>\n<body>\n"
        + "\n".join(body) + "\n</body>\n</html>\n"
    )


def write_report(results: Mapping, tables: Mapping[str, pd.DataFrame],
                 figures: Mapping[str, Mapping[str, Path]], out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``.

    Parameters
    ----------
    results : Mapping
        ``results.json`` content with undefined numbers as None.
    tables : mapping of str to pandas.DataFrame
        From :func:`analysis.build_tables`.
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
