"""The agreement report's rows, computed from a study's labels as plain values.

:func:`~.overview.agreement_report` reads the labels (:mod:`.label_table`) and caches what
:func:`agreement_rows` computes here; every statistic is :mod:`analysis.stats.agreement`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.stats import agreement as agreement_stats
from spotlight_study.studies.models import Setting

from .label_table import LabelTable
from .models import COMPARED_FIELDS, CodebookTag


@dataclass(frozen=True)
class AgreementRow:
    """Agreement on one label over a scope (``all`` items, or one setting's items).

    ``comparison`` is ``all`` (every annotator at once), ``pair`` (annotator ``rater_a`` x
    annotator ``rater_b``) or ``vs_final`` (annotator ``rater_a`` against the final labels;
    ``rater_b`` is ``final``). Raters are annotator pseudonyms; both are empty for ``all``.
    """

    field: str
    scope: str
    result: agreement_stats.Agreement
    comparison: str = "all"
    rater_a: str = ""
    rater_b: str = ""


#: The label fields compared as one nominal value each (tags are compared one by one).
SINGLE_VALUE_FIELDS = tuple(f for f in COMPARED_FIELDS if f != "tags")


def codebooks_of(settings: list[Setting]) -> dict[int, list[str]]:
    """``{setting pk: codebook}`` as :func:`codebook` gives it, in one query for all settings."""
    added: dict[int, list[str]] = {s.pk: [] for s in settings}
    for setting_id, name in CodebookTag.objects.filter(setting__in=settings).order_by(
        "name"
    ).values_list("setting_id", "name"):
        added[setting_id].append(name)
    out = {}
    for s in settings:
        base = list(s.annotation_tags)
        out[s.pk] = base + [t for t in added[s.pk] if t not in base]
    return out


def agreement_rows(
    *,
    table: LabelTable,
    names: list[str],
    settings: list[Setting],
    codebooks: dict[int, list[str]],
    pairs_in_every_scope: bool,
) -> list[AgreementRow]:
    """The rows of :func:`~.overview.agreement_report` from the study's ``table``.

    ``names`` are the pseudonyms of the annotators of ``table.codes`` (user ids in rating
    order); ``settings`` the study's settings and ``codebooks`` :func:`codebooks_of` them. Against
    the final labels means against the human ones (:func:`~.selectors.human_final`).

    Each statistic is :func:`analysis.stats.agreement.coded_agreement` (or its pairwise form)
    of the table's codes, restricted to the scope's items: the same values as
    :func:`~analysis.stats.agreement.agreement` of the ratings as lists.
    """
    codes = table.codes
    setting_of = np.array([setting_id for _pk, setting_id in table.items], dtype=np.int64)
    rows: list[AgreementRow] = []

    def emit(field: str, scope: str, coded: np.ndarray, reference: np.ndarray) -> None:
        rows.append(AgreementRow(field, scope, agreement_stats.coded_agreement(coded)))
        if not pairs_in_every_scope and (scope != "all" or field.startswith("tag:")):
            return
        for pair in agreement_stats.coded_pairwise_agreement(coded, names, reference=reference):
            comparison = "vs_final" if pair.rater_b == "final" else "pair"
            rows.append(
                AgreementRow(field, scope, pair.result, comparison, pair.rater_a, pair.rater_b)
            )

    by_setting = {s.pk: np.flatnonzero(setting_of == s.pk) for s in settings}
    scopes = [("all", np.arange(len(setting_of)))] + [(s.key, by_setting[s.pk]) for s in settings]
    for field in SINGLE_VALUE_FIELDS:
        coded, final = codes.fields[field]
        for scope, idx in scopes:
            if not len(idx):
                continue
            emit(field, scope, coded[:, idx], final[idx])
    for s in settings:
        idx = by_setting[s.pk]
        if not len(idx):
            continue
        tagged = codes.tagged[:, idx]
        in_scope = np.zeros(len(setting_of), dtype=bool)
        in_scope[idx] = True
        used = sorted(t for t, (_r, c) in codes.tag_cells.items() if in_scope[c].any())
        tags = codebooks[s.pk]
        for tag in tags + [t for t in used if t not in tags]:
            present = np.zeros(codes.tagged.shape, dtype=bool)
            if tag in codes.tag_cells:
                present[codes.tag_cells[tag]] = True
            # 1: given, 0: labelled without it, -1: not labelled (as tag_presence).
            coded = np.where(tagged, present[:, idx].astype(np.int64), -1)
            reference = np.array(
                [-1 if codes.final_tags[i] is None else int(tag in codes.final_tags[i]) for i in idx],
                dtype=np.int64,
            )
            emit(f"tag:{tag}", s.key, coded, reference)
    return rows
