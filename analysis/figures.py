"""Figures of the study analysis, written as PNG and SVG.

Uses matplotlib's object-oriented API on the Agg canvas and never imports
``pyplot``, so no display is needed and no global backend is changed in the
process that calls it (for example a Django worker).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from .survey_measures import wrapped

__all__ = [
    "AGREEMENT_LABELS",
    "CONDITION_LABELS",
    "FREQUENCY_LABELS",
    "background_figure",
    "identification_figure",
    "item_label",
    "likert_figure",
    "write_figures",
]

CONDITION_LABELS = {
    "pattern": "with pattern",
    "no_pattern": "without pattern",
    "pattern_with_distractors": "pattern + distractors",
}
_CONDITION_COLORS = {"no_pattern": "#9e9e9e", "pattern": "#1f77b4", "pattern_with_distractors": "#ff7f0e"}
#: Wording of the 1-5 agreement scale of the per-condition items.
AGREEMENT_LABELS = ("Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree")
#: Wording of the 1-5 frequency scale of the background items.
FREQUENCY_LABELS = ("Never", "A few times", "Once or twice per month", "Once or twice per week", "Daily")
#: Figure names, each written as ``<name>.png`` and ``<name>.svg``.
FIGURE_NAMES = ("identification_rate", "likert", "background")
# Fixed SVG ids and no dates, so identical input gives identical files.
_DETERMINISTIC = {"svg.hashsalt": "analysis", "svg.fonttype": "path"}


def item_label(item: str, texts: Mapping[str, str] | None = None) -> str:
    """The label of a survey item for figures and the report: the researcher's own words.

    Parameters
    ----------
    item : str
        Item key as in ``survey.csv``, e.g. ``"llm_use"``.
    texts : mapping of str to str, optional
        ``{key: text}`` from the export's ``survey_items.json``
        (:func:`analysis.survey_measures.item_words`).

    Returns
    -------
    str
        The item's text word for word, or the key itself when ``texts`` has none: never a
        paraphrase of the platform's own.

    Raises
    ------
    TypeError
        If ``texts`` is not a mapping.

    Notes
    -----
    Issue 34: the report and figures use the study's own words, in the study's language.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Survey items with types".

    Examples
    --------
    >>> item_label("ease", {"ease": "Solving the task was easy."}), item_label("llm_use")
    ('Solving the task was easy.', 'llm_use')
    """
    return (texts or {}).get(item, item)


def _scale(words: Mapping | None, name: str, default: tuple) -> tuple:
    """A 5-point scale's labels from ``words`` (the study's), else ``default``."""
    labels = tuple((words or {}).get(name) or ())
    return labels if len(labels) == 5 else default


def _new_figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _empty(fig: Figure, message: str) -> Figure:
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11)
    return fig


def identification_figure(rates: pd.DataFrame) -> Figure:
    """Bar chart of identification rates with Wilson intervals.

    Parameters
    ----------
    rates : pandas.DataFrame, shape (n_settings * n_conditions, 7)
        The ``identification_rates`` table: columns ``setting``,
        ``condition``, ``n``, ``k``, ``rate``, ``ci_lo``, ``ci_hi`` (rates
        in [0, 1]).

    Returns
    -------
    matplotlib.figure.Figure
        One group of bars per setting, one bar per condition, error bars
        from the Wilson interval, ``k/n`` above each bar.

    Raises
    ------
    KeyError
        If ``rates`` lacks one of the columns above.

    Notes
    -----
    Error bars are asymmetric (``rate - ci_lo``, ``ci_hi - rate``) because
    Wilson intervals are.

    References
    ----------
    .. [1] Wilson (1927), the interval of :func:`analysis.stats.wilson_ci`
       (full entry there).

    Examples
    --------
    >>> fig = identification_figure(tables["identification_rates"])  # doctest: +SKIP
    """
    settings = sorted(rates["setting"].unique())
    conditions = [c for c in CONDITION_LABELS if c in set(rates["condition"])]
    order = ["no_pattern", "pattern", "pattern_with_distractors"]
    conditions = [c for c in order if c in conditions]
    fig = _new_figure(max(4.5, 1.8 * len(settings) + 2), 4.0)
    if rates.empty:
        return _empty(fig, "No included responses")
    ax = fig.add_subplot()
    width = 0.8 / len(conditions)
    x = np.arange(len(settings))
    for i, condition in enumerate(conditions):
        sub = rates[rates["condition"] == condition].set_index("setting").reindex(settings)
        pos = x + (i - (len(conditions) - 1) / 2) * width
        rate = sub["rate"].to_numpy(dtype=float)
        yerr = np.vstack([rate - sub["ci_lo"].to_numpy(dtype=float), sub["ci_hi"].to_numpy(dtype=float) - rate])
        # Wilson bounds can miss a rate of 0 or 1 by one ulp; matplotlib refuses negative errors.
        yerr = np.clip(yerr, 0.0, None)
        ax.bar(pos, rate, width, yerr=yerr, capsize=4, color=_CONDITION_COLORS[condition],
               label=CONDITION_LABELS[condition], error_kw={"elinewidth": 1})
        for xp, row in zip(pos, sub.itertuples()):
            if pd.notna(row.n):
                ax.text(xp, min(row.ci_hi + 0.03, 1.06), f"{int(row.k)}/{int(row.n)}",
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, settings)
    ax.set_ylim(0, 1.1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("Identified the target difference")
    ax.set_title("Identification rate by setting and condition (95% Wilson CI)", fontsize=10)
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncols=len(conditions))
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _stacked_colors(cmap_name: str, n: int, neutral_grey: bool) -> list:
    colors = list(matplotlib.colormaps[cmap_name](np.linspace(0.12, 0.88, n)))
    if neutral_grey:
        colors[n // 2] = (0.82, 0.82, 0.82, 1.0)
    return colors


def likert_figure(distribution: pd.DataFrame, words: Mapping | None = None) -> Figure:
    """Diverging stacked bars of the per-condition Likert items.

    Parameters
    ----------
    distribution : pandas.DataFrame, shape (n_items * n_conditions * 5, 5)
        The ``likert_distribution`` table: columns ``item``, ``condition``
        (``pattern``, ``no_pattern`` or ``pattern_with_distractors``),
        ``response`` (1-5), ``count``, ``share`` (in [0, 1]).

    Returns
    -------
    matplotlib.figure.Figure
        One group of horizontal bars per item, one bar per condition in the
        table (with pattern, without pattern, pattern + distractors).
        Disagreement extends left of zero and agreement right; the neutral
        answer is split evenly across zero.

    Raises
    ------
    KeyError
        If ``distribution`` lacks one of the columns above.

    Notes
    -----
    Bar ``i`` starts at ``-(share_1 + share_2 + share_3 / 2)``; segments are
    then stacked left to right, so the bar's centre of mass shows the
    lean.

    References
    ----------
    .. [1] Heiberger, R. M., & Robbins, N. B. (2014). Design of diverging
       stacked bar charts for Likert scales and other applications. *Journal
       of Statistical Software*, 57(5).

    Examples
    --------
    >>> fig = likert_figure(tables["likert_distribution"])  # doctest: +SKIP
    """
    items = list(dict.fromkeys(distribution["item"]))
    present = set(distribution["condition"])
    conditions = [c for c in CONDITION_LABELS if c in present]
    fig = _new_figure(8.0, max(2.5, 0.75 * max(len(conditions), 1) * len(items) + 1.4))
    if not items:
        return _empty(fig, "No per-condition survey responses")
    ax = fig.add_subplot()
    colors = _stacked_colors("BrBG", 5, neutral_grey=True)
    labels, positions, y = [], [], 0.0
    handles = {}
    for item in items:
        for condition in conditions:
            sub = distribution[(distribution["item"] == item) & (distribution["condition"] == condition)]
            sub = sub.set_index("response").reindex(range(1, 6))
            shares = sub["share"].fillna(0).to_numpy(dtype=float)
            n = int(sub["count"].fillna(0).sum())
            left = -(shares[0] + shares[1] + shares[2] / 2)
            for level, share in enumerate(shares):
                bar = ax.barh(y, share, left=left, color=colors[level], height=0.7, edgecolor="white",
                              linewidth=0.5)
                handles.setdefault(level, bar)
                left += share
            ax.text(1.02, y, f"n={n}", va="center", fontsize=8)
            text = item_label(item, (words or {}).get("items"))
            labels.append(wrapped(f"{text} ({CONDITION_LABELS[condition]})"))
            positions.append(y)
            y += 1
        y += 0.4  # gap between items
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlim(-1, 1.12)
    ax.set_xticks(np.linspace(-1, 1, 5), ["100%", "50%", "0", "50%", "100%"])
    ax.set_xlabel("Share of responses (disagree left, agree right)")
    ax.set_title("Post-task survey by condition", fontsize=10)
    fig.legend([handles[i] for i in range(5)], _scale(words, "agreement", AGREEMENT_LABELS),
               loc="outside lower center",
               ncols=5, fontsize=7, frameon=False)
    ax.spines[["top", "right", "left"]].set_visible(False)
    return fig


def background_figure(background: pd.DataFrame, words: Mapping | None = None) -> Figure:
    """Stacked bars of the background items' answer distribution.

    Parameters
    ----------
    background : pandas.DataFrame, shape (n_items * 5, 4)
        The ``background`` table: columns ``item``, ``response`` (1-5 on the
        frequency scale), ``count``, ``share`` (in [0, 1]).

    Returns
    -------
    matplotlib.figure.Figure
        One 100% stacked horizontal bar per item, from "Never" to "Daily".

    Raises
    ------
    KeyError
        If ``background`` lacks one of the columns above.

    Notes
    -----
    Shares per item sum to 1; ``n`` is printed next to each bar.

    References
    ----------
    .. [1] Hedderich et al. (2025), ACL 2025: background items shown as
       distributions.

    Examples
    --------
    >>> fig = background_figure(tables["background"])  # doctest: +SKIP
    """
    items = list(dict.fromkeys(background["item"]))
    fig = _new_figure(8.0, max(2.5, 0.6 * len(items) + 1.6))
    if not items:
        return _empty(fig, "No background survey responses")
    ax = fig.add_subplot()
    colors = _stacked_colors("Blues", 5, neutral_grey=False)
    handles = {}
    for y, item in enumerate(items):
        sub = background[background["item"] == item].set_index("response").reindex(range(1, 6))
        shares = sub["share"].fillna(0).to_numpy(dtype=float)
        left = 0.0
        for level, share in enumerate(shares):
            bar = ax.barh(y, share, left=left, color=colors[level], height=0.7, edgecolor="white",
                          linewidth=0.5)
            handles.setdefault(level, bar)
            left += share
        ax.text(1.01, y, f"n={int(sub['count'].fillna(0).sum())}", va="center", fontsize=8)
    texts = (words or {}).get("items")
    ax.set_yticks(range(len(items)), [wrapped(item_label(i, texts)) for i in items], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.08)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title("Background: how often in the last 12 months", fontsize=10)
    fig.legend([handles[i] for i in range(5)], _scale(words, "frequency", FREQUENCY_LABELS),
               loc="outside lower center",
               ncols=5, fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def write_figures(tables: dict[str, pd.DataFrame], out_dir: str | Path,
                  words: Mapping | None = None) -> dict[str, dict[str, Path]]:
    """Draw the three figures and save each as PNG and SVG.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        From :func:`analysis.build_tables`; uses ``identification_rates``,
        ``likert_distribution`` and ``background``.
    out_dir : str or pathlib.Path
        Directory for the images; created if needed.
    words : mapping, optional
        The study's words (:func:`analysis.survey_measures.item_words`): item texts for the
        axes and the 5-point scales' labels for the legends; without them, item keys and the
        reference study's scale labels.

    Returns
    -------
    dict
        ``{name: {"png": Path, "svg": Path}}`` for the names
        ``identification_rate``, ``likert`` and ``background``. A figure
        without data shows a short "no responses" note instead of bars.

    Raises
    ------
    OSError
        If the files cannot be written.

    Notes
    -----
    PNGs are saved at 150 dpi. SVG ids use a fixed salt and no creation
    date, so re-running on the same input gives identical SVG files.

    References
    ----------
    .. [1] matplotlib, ``Figure.savefig``.

    Examples
    --------
    >>> paths = write_figures(tables, "out/figures")  # doctest: +SKIP
    >>> paths["likert"]["svg"].name  # doctest: +SKIP
    'likert.svg'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "identification_rate": identification_figure(tables["identification_rates"]),
        "likert": likert_figure(tables["likert_distribution"], words),
        "background": background_figure(tables["background"], words),
    }
    paths: dict[str, dict[str, Path]] = {}
    with matplotlib.rc_context(_DETERMINISTIC):
        for name, fig in figures.items():
            png, svg = out / f"{name}.png", out / f"{name}.svg"
            fig.savefig(png, format="png", dpi=150, metadata={"Software": None})
            fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
            paths[name] = {"png": png, "svg": svg}
    return paths
