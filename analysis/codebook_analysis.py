"""The analysis of a study's declared codebook: the outcome tested by its type, agreement per
field, and each multi_choice field per condition, with the researcher's labels word for word.

Which statistic and test a type gets is :mod:`analysis.measures`'s table; the statistics come from
:mod:`analysis.stats` (scipy, statsmodels, scikit-learn, krippendorff). Input is ``responses.csv``
of the export (one row per participant x main setting, the codebook's columns after the
platform's), the codebook as stored (``Study.annotation_codebook``) and the annotators' ratings
per field (gathered by the Django side). Pure Python: no Django.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from sklearn.metrics import cohen_kappa_score

from .document import Bullets, Data, Heading, Para, Table, fmt_ci, fmt_num, fmt_p, fmt_pct, to_html, to_markdown
from .measures import MEASURES, SOURCES, outcome_test_of
from .stats import agreement as agr
from .stats.multicomp import holm_correction
from .stats.nominal import TEST_WORDS, nominal_test
from .stats.proportion import compare_proportions, wilson_ci
from .stats.rank import mann_whitney

#: The baseline condition every treatment is compared with, as in the reference analysis.
BASELINE = "no_pattern"
#: Between a multi_choice field's key and an option in its 0/1 column (as the export writes).
OPTION_SEPARATOR = ":"


# --- agreement per field ------------------------------------------------------------------------


def _quadratic_kappa(ratings: list[list], n_options: int) -> agr.Statistic:
    """Quadratic-weighted Cohen's kappa of two annotators' ranks over the items both rated."""
    rows = [r for r in ratings if any(v is not None for v in r)]
    if len(rows) != 2:
        return agr.undefined(f"needs exactly two annotators, there are {len(rows)}")
    pairs = [(a, b) for a, b in zip(*rows) if a is not None and b is not None]
    if not pairs:
        return agr.undefined("the two annotators labeled no item in common")
    if len({v for p in pairs for v in p}) < 2:
        return agr.undefined("every shared rating has the same value")
    a, b = zip(*pairs)
    return agr.Statistic(float(cohen_kappa_score(a, b, weights="quadratic",
                                                 labels=list(range(n_options)))))


def field_agreement(field: Mapping, ratings: Sequence[Sequence]) -> dict:
    """Agreement of the annotators on one codebook field, with the statistics of its type.

    Parameters
    ----------
    field : mapping
        The codebook field (``key``, ``type``, ``options``).
    ratings : sequence of sequences, shape (n_annotators, n_items)
        Each annotator's stored value per item (``None``: not labeled): a bool, an option, a
        list of options (multi_choice) or a number.

    Returns
    -------
    dict
        ``{"key", "label", "type", "n_items", "statistics": {name: Statistic}}``; for
        multi_choice ``"options": {option: {"cohen_kappa": Statistic, ...}}`` instead. Names as
        in :data:`analysis.measures.MEASURES` (``krippendorff_alpha:ordinal`` etc.), plus
        ``percent_agreement``.

    Notes
    -----
    Ordinal values are coded as their rank among the options (0 lowest) for alpha ordinal and
    quadratic-weighted kappa (``sklearn.metrics.cohen_kappa_score(weights="quadratic")``,
    Cohen 1968); numbers go to alpha interval as they are. Sources: :data:`analysis.measures.SOURCES`.
    """
    kind = field["type"]
    measure = MEASURES[kind]
    out = {"key": field["key"], "label": field["label"], "type": kind}
    rows = [list(r) for r in ratings]
    out["n_items"] = sum(1 for col in zip(*rows) if sum(v is not None for v in col) >= 2) if rows else 0
    if kind == "multi_choice":
        options = list(field.get("options", []))
        out["options"] = {}
        for option in options if rows else []:
            presence = [[None if v is None else option in v for v in r] for r in rows]
            out["options"][option] = {"percent_agreement": agr.percent_agreement(presence),
                                      "cohen_kappa": agr.cohen_kappa(presence)}
        return out
    if kind == "ordinal":
        rank = {o: i for i, o in enumerate(field["options"])}
        rows = [[None if v is None else rank[v] for v in r] for r in rows]
    stats = {"percent_agreement": agr.percent_agreement(rows)} if rows else {}
    for name in measure.agreement:
        if name == "cohen_kappa":
            stats[name] = agr.cohen_kappa(rows)
        elif name == "quadratic_kappa":
            stats[name] = _quadratic_kappa(rows, len(field["options"]))
        else:
            stats[name] = agr.krippendorff_alpha(rows, level=name.split(":")[1])
    out["statistics"] = stats
    return out


# --- the outcome between conditions -------------------------------------------------------------


def _labeled(responses: pd.DataFrame, key: str) -> pd.DataFrame:
    """The kept answers (not excluded) that have a final value of ``key``."""
    kept = responses[responses["excluded"].astype(str) == "0"]
    return kept[kept[key].notna() & (kept[key].astype(str) != "")]


def outcome_tests(responses: pd.DataFrame, codebook: Mapping, *, alpha: float = 0.05) -> dict:
    """The outcome compared between each treatment and ``no_pattern``, per setting, by its type.

    Parameters
    ----------
    responses : DataFrame
        ``responses.csv`` (columns ``setting``, ``condition``, ``excluded`` and the outcome's).
    codebook : mapping
        The declared codebook (``fields``, ``outcome``, optional ``success``).
    alpha : float
        Level of the Holm correction over the family (every setting x treatment).

    Returns
    -------
    dict
        ``{"field", "label", "type", "test", "source", "comparisons": [ {setting, treatment,
        n_baseline, n_treatment, ..., p, p_holm} ]}``: for the z-test the counts of success,
        rates, each rate's Wilson interval at level ``1 - alpha`` (``ci_treatment``,
        ``ci_baseline``: ``[lo, hi]`` in [0, 1]), z and p (one-tailed: larger with the
        treatment); for Mann-Whitney U ``u``, ``p``
        (one-tailed: greater with the treatment) and the rank-biserial correlation; for
        chi-square/Fisher the table, statistic and p (two-sided).
    """
    fields = {f["key"]: f for f in codebook["fields"]}
    field = fields[codebook["outcome"]]
    success = codebook.get("success") or {}
    test = outcome_test_of(field, success)
    key = field["key"]
    data = _labeled(responses, key)
    comparisons = []
    for setting in sorted(data["setting"].unique()):
        rows = data[data["setting"] == setting]
        base = rows[rows["condition"] == BASELINE][key]
        for treatment in sorted(c for c in rows["condition"].unique() if c != BASELINE):
            treated = rows[rows["condition"] == treatment][key]
            if base.empty or treated.empty:
                continue
            entry = {"setting": setting, "treatment": treatment,
                     "n_baseline": int(base.size), "n_treatment": int(treated.size)}
            entry.update(_one_test(test, field, success, treated, base))
            if test == "two_proportion_ztest":
                # Each rate with its Wilson interval at the family's level, as the reference
                # study's report gives them (stats.proportion.wilson_ci: statsmodels).
                entry["ci_treatment"] = list(wilson_ci(entry["k_treatment"], entry["n_treatment"], alpha=alpha))
                entry["ci_baseline"] = list(wilson_ci(entry["k_baseline"], entry["n_baseline"], alpha=alpha))
            comparisons.append(entry)
    tested = [c for c in comparisons if c["p"] == c["p"]]  # NaN: undefined, not in the family
    if tested:
        holm = holm_correction([c["p"] for c in tested], alpha=alpha)
        for c, p in zip(tested, holm.p_adjusted):
            c["p_holm"] = float(p)
    source_keys = ("chi_square", "fisher_exact") if test == "chi_square_or_fisher" else (test,)
    out = {"field": key, "label": field["label"], "type": field["type"], "test": test,
           "source": "; ".join(SOURCES[s] for s in source_keys), "comparisons": comparisons}
    if test == "two_proportion_ztest":
        out["ci_level"] = 1 - alpha
    return out


def _is_success(field: Mapping, success: Mapping, value) -> bool:
    if success:
        return success.get(str(value)) == "success"
    if field["type"] == "choice":
        return str(value) == field["options"][-1]
    return str(value).strip() in ("1", "True", "true")


def _one_test(test: str, field: Mapping, success: Mapping, treated: pd.Series, base: pd.Series) -> dict:
    if test == "two_proportion_ztest":
        k_t = sum(_is_success(field, success, v) for v in treated)
        k_b = sum(_is_success(field, success, v) for v in base)
        c = compare_proportions(k_t, treated.size, k_b, base.size, alternative="larger")
        return {"k_treatment": int(k_t), "k_baseline": int(k_b), "rate_treatment": c.rate_pattern,
                "rate_baseline": c.rate_no_pattern, "z": c.z_val, "p": c.p_val, "cohens_h": c.cohens_h}
    if test == "mann_whitney":
        if field["type"] == "ordinal":
            rank = {o: i for i, o in enumerate(field["options"])}
            x, y = [rank[str(v)] for v in treated], [rank[str(v)] for v in base]
        else:
            x, y = [float(v) for v in treated], [float(v) for v in base]
        r = mann_whitney(x, y, alternative="greater")
        return {"u": r.u_val, "p": r.p_val, "rbc": r.rbc,
                "median_treatment": float(pd.Series(x).median()),
                "median_baseline": float(pd.Series(y).median())}
    options = list(field["options"])
    table = [[int((s.astype(str) == o).sum()) for o in options] for s in (treated, base)]
    r = nominal_test(table)
    if r.test is None:
        return {"p": float("nan"), "test_used": "", "undefined_reason": r.reason, "table": table}
    return {"test_used": r.test, "statistic": r.statistic, "p": r.p_val, "dof": r.dof,
            "min_expected": r.min_expected, "table": table, "options": options}


# --- multi_choice fields per condition ----------------------------------------------------------


def multi_choice_summary(responses: pd.DataFrame, field: Mapping) -> dict:
    """Counts and shares of each option of a multi_choice field per condition.

    Returns ``{"key", "label", "conditions": {condition: {"n": answers with a final label,
    "options": {option: {"count", "share"}}}}}``; the options are the export's 0/1 columns
    (``<key>:<option>``), shares of the kept answers with a final label.
    """
    key = field["key"]
    prefix = f"{key}{OPTION_SEPARATOR}"
    columns = [c for c in responses.columns if c.startswith(prefix)]
    kept = responses[(responses["excluded"].astype(str) == "0") & (responses["label_source"].astype(str) != "")]
    kept = kept[kept["label_source"].notna()]
    out = {"key": key, "label": field["label"], "conditions": {}}
    for condition in sorted(kept["condition"].unique()):
        rows = kept[kept["condition"] == condition]
        n = int(len(rows))
        out["conditions"][condition] = {"n": n, "options": {
            c[len(prefix):]: {"count": int(pd.to_numeric(rows[c]).sum()),
                              "share": float(pd.to_numeric(rows[c]).sum() / n) if n else None}
            for c in columns
        }}
    return out


# --- preregistration ---------------------------------------------------------------------------


def planned_codebook(codebook: Mapping) -> dict:
    """What a preregistered plan records of a declared codebook: its fields, outcome and
    ``success`` mapping as stored, the outcome's test and each compared field's agreement
    statistics (from :data:`analysis.measures.MEASURES`)."""
    outcome = next(f for f in codebook["fields"] if f["key"] == codebook["outcome"])
    return {
        "fields": [dict(f) for f in codebook["fields"]],
        "outcome": codebook["outcome"],
        "success": dict(codebook.get("success") or {}),
        "outcome_test": outcome_test_of(outcome, codebook.get("success")),
        "agreement": {f["key"]: list(MEASURES[f["type"]].agreement) for f in codebook["fields"]
                      if f["type"] != "note"},
    }


def codebook_deviations(planned: Mapping | None, codebook: Mapping) -> list[str]:
    """How the codebook analysed differs from the one a plan recorded (:func:`planned_codebook`):
    one sentence per changed part (fields added, removed or changed, the outcome, the success
    mapping, the outcome's test). ``[]`` when they agree; a plan without a codebook gives one
    sentence saying the codebook was not preregistered."""
    if planned is None:
        return ["The plan records no codebook: the codebook analysed was not preregistered."]
    now = planned_codebook(codebook)
    out = []
    old_fields = {f["key"]: f for f in planned["fields"]}
    new_fields = {f["key"]: f for f in now["fields"]}
    out += [f"Field `{k}` was added after the plan." for k in new_fields if k not in old_fields]
    out += [f"Field `{k}` of the plan was removed." for k in old_fields if k not in new_fields]
    out += [f"Field `{k}` changed after the plan." for k in new_fields
            if k in old_fields and old_fields[k] != new_fields[k]]
    for part, words in (("outcome", "The outcome"), ("success", "The success mapping"),
                        ("outcome_test", "The outcome's test")):
        if planned.get(part) != now[part]:
            out.append(f"{words} changed: planned {planned.get(part)!r}, analysed {now[part]!r}.")
    return out


# --- results and report -------------------------------------------------------------------------


def codebook_results(responses: pd.DataFrame, codebook: Mapping, agreement: Sequence[Mapping],
                     *, alpha: float = 0.05, plan: Mapping | None = None,
                     survey: Mapping | None = None) -> dict:
    """Everything the codebook section reports: ``outcome`` (:func:`outcome_tests`),
    ``agreement`` (the :func:`field_agreement` of each compared field, as given) and
    ``multi_choice`` (:func:`multi_choice_summary` of each multi_choice field); with a
    preregistered ``plan``, ``deviations`` (:func:`codebook_deviations` of its ``codebook``);
    with ``survey`` (:func:`analysis.pipeline.survey_results` and ``survey_words``, given when
    the outcome is no proportion and this is the study's only report), ``survey``."""
    out = {
        "outcome": outcome_tests(responses, codebook, alpha=alpha),
        "agreement": list(agreement),
        "multi_choice": [multi_choice_summary(responses, f) for f in codebook["fields"]
                         if f["type"] == "multi_choice"],
    }
    if plan is not None:
        out["deviations"] = codebook_deviations(plan.get("codebook"), codebook)
    if survey is not None:
        out["survey"] = dict(survey)
    return out


def _stat_text(stat) -> str:
    """A statistic as text: an :class:`~analysis.stats.agreement.Statistic`, or its plain form
    ``{"value", "undefined_reason"}`` (``codebook_results.json``)."""
    if hasattr(stat, "display"):
        return stat.display(3)
    if isinstance(stat, Mapping):
        return f"{stat['value']:.3f}" if stat.get("value") is not None else (
            f"undefined ({stat.get('undefined_reason')})" if stat.get("undefined_reason") else "-")
    return "-"


_TEST_NAMES = {"two_proportion_ztest": "one-tailed two-proportion z-test",
               "mann_whitney": "Mann-Whitney U (one-tailed: higher with the treatment)",
               "chi_square_or_fisher": "chi-square, or Fisher's exact test for small counts"}


def _interval(ci) -> str:
    """`` (31.2% to 59.5%)`` (:func:`.document.fmt_ci`), or "" for an older results.json without one."""
    return f" ({fmt_ci(ci)})" if ci else ""


def report_blocks(results: Mapping) -> list:
    """The report's codebook sections as :mod:`analysis.document` blocks."""
    o = results["outcome"]
    blocks: list = [Heading(2, "Outcome"), Para("The outcome is ", Data(o["label"]), f" ({o['type']}), "
                    f"tested with {_TEST_NAMES[o['test']]}. Source: {o['source']}."
                    + (f" Each rate is followed by its {100 * o['ci_level']:.0f}% Wilson score interval "
                       "(statsmodels' proportion_confint)." if "ci_level" in o else ""))]
    rows = []
    for c in o["comparisons"]:
        if o["test"] == "mann_whitney":
            detail = f"U={fmt_num(c['u'])}, medians {fmt_num(c['median_treatment'])} vs {fmt_num(c['median_baseline'])}, r={fmt_num(c['rbc'])}"
        elif o["test"] == "two_proportion_ztest":
            detail = (f"{fmt_pct(c['rate_treatment'])}{_interval(c.get('ci_treatment'))} vs "
                      f"{fmt_pct(c['rate_baseline'])}{_interval(c.get('ci_baseline'))}, z={fmt_num(c['z'])}")
        else:
            detail = f"{TEST_WORDS.get(c.get('test_used'), 'undefined')}, statistic={fmt_num(c.get('statistic'))}"
        rows.append([Data(c["setting"]), Data(c["treatment"]), f"{c['n_treatment']} / {c['n_baseline']}",
                     detail, fmt_p(c["p"]), fmt_p(c.get("p_holm"))])
    blocks.append(Table(["Setting", "Treatment", "n (treatment / no_pattern)", "Result", "p", "p (Holm)"], rows)
                  if rows else Para("No setting has answers in both conditions yet."))
    if "deviations" in results:
        blocks += [Heading(2, "Deviations from the preregistered codebook")]
        blocks.append(Bullets([[d] for d in results["deviations"]]) if results["deviations"]
                      else Para("None: the codebook and the outcome's test are as preregistered."))
    blocks += [Heading(2, "Agreement per field")]
    arows = []
    for a in results["agreement"]:
        if a["type"] == "multi_choice":
            for option, stats in a.get("options", {}).items():
                arows.append([Data(a["label"]), Data(option), a["type"], "Cohen's kappa",
                              _stat_text(stats["cohen_kappa"])])
            continue
        for name, stat in a["statistics"].items():
            if name != "percent_agreement":
                arows.append([Data(a["label"]), "", a["type"], name.replace("_", " "), _stat_text(stat)])
    blocks.append(Table(["Field", "Option", "Type", "Statistic", "Value"], arows) if arows
                  else Para("No item has two labels yet."))
    for m in results["multi_choice"]:
        blocks += [Heading(2, m["label"]), Para("Counts and shares per condition (kept answers with a final label).")]
        conditions = list(m["conditions"])
        options = list(next(iter(m["conditions"].values()))["options"]) if conditions else []
        mrows = [[Data(opt)] + [f"{m['conditions'][c]['options'][opt]['count']} ({fmt_pct(m['conditions'][c]['options'][opt]['share'])})"
                                for c in conditions] for opt in options]
        blocks.append(Table(["Option"] + [f"{c} (n={m['conditions'][c]['n']})" for c in conditions], mrows))
    if "survey" in results:
        from .codebook_survey import survey_blocks  # imports the reference report's modules

        blocks += survey_blocks(results["survey"])
    return blocks


def _plain(value):
    if isinstance(value, agr.Statistic):
        return {"value": value.value, "undefined_reason": value.undefined_reason}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


def write_codebook_report(results: Mapping, out_dir: str | Path, *, title: str) -> dict:
    """Write ``codebook_results.json``, ``codebook_report.md`` and ``codebook_report.html`` into
    ``out_dir``; returns the results as plain JSON data (statistics as value and reason)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocks = [Heading(1, title)] + report_blocks(results)
    plain = _plain(results)
    (out / "codebook_results.json").write_text(json.dumps(plain, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    (out / "codebook_report.md").write_text(to_markdown(blocks, {}, out), encoding="utf-8")
    (out / "codebook_report.html").write_text(to_html(blocks, {}, out), encoding="utf-8")
    return plain
