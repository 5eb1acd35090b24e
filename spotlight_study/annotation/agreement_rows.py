"""The agreement report's rows, computed from a study's labels as plain values.

:func:`~.selectors.agreement_report` reads the labels (:mod:`.label_table`) and caches what
:func:`agreement_rows` computes here; every statistic is :mod:`analysis.stats.agreement`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    finals: list,
    annotators: list[int],
    names: list[str],
    settings: list[Setting],
    codebooks: dict[int, list[str]],
    pairs_in_every_scope: bool,
) -> list[AgreementRow]:
    """The rows of :func:`~.selectors.agreement_report` from the study's ``table``.

    ``finals[i]`` is item ``i``'s human final label (:func:`~.selectors.human_final`) or
    ``None``; ``annotators`` the user ids in rating order and ``names`` their pseudonyms;
    ``settings`` the study's settings and ``codebooks`` :func:`codebooks_of` them.
    """
    by_item = table.annotations
    setting_of = [setting_id for _pk, setting_id in table.items]
    rows: list[AgreementRow] = []

    def emit(field: str, scope: str, ratings: list, reference: list) -> None:
        rows.append(AgreementRow(field, scope, agreement_stats.agreement(ratings)))
        if not pairs_in_every_scope and (scope != "all" or field.startswith("tag:")):
            return
        for pair in agreement_stats.pairwise_agreement(ratings, names, reference=reference):
            comparison = "vs_final" if pair.rater_b == "final" else "pair"
            rows.append(
                AgreementRow(field, scope, pair.result, comparison, pair.rater_a, pair.rater_b)
            )

    by_setting = {s.pk: [i for i, sid in enumerate(setting_of) if sid == s.pk] for s in settings}
    scopes = [("all", list(range(len(setting_of))))] + [(s.key, by_setting[s.pk]) for s in settings]
    for field in SINGLE_VALUE_FIELDS:
        for scope, idx in scopes:
            if not idx:
                continue
            ratings = [
                [getattr(by_item[i][u], field) if u in by_item[i] else None for i in idx]
                for u in annotators
            ]
            reference = [None if finals[i] is None else getattr(finals[i], field) for i in idx]
            emit(field, scope, ratings, reference)
    for s in settings:
        idx = by_setting[s.pk]
        if not idx:
            continue
        tag_sets = [
            [by_item[i][u].tags if u in by_item[i] else None for i in idx] for u in annotators
        ]
        presence = agreement_stats.tag_presence(tag_sets)
        tags = codebooks[s.pk]
        for tag in tags + sorted(set(presence) - set(tags)):
            ratings = presence.get(tag) or [
                [None if ts is None else False for ts in row] for row in tag_sets
            ]
            reference = [None if finals[i] is None else tag in finals[i].tags for i in idx]
            emit(f"tag:{tag}", s.key, ratings, reference)
    return rows
