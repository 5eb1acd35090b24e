"""The researcher's annotation overview and the agreement report: figures computed from every
label of a study (:mod:`.label_table`), kept in Django's cache (the overview under the study's
:func:`~.label_table.labels_version`, and in the database for the other processes; the report
under the digest of its labels)."""
from __future__ import annotations

from collections import Counter

from django.core.cache import cache

from spotlight_study.studies.models import Setting, Study

from .agreement_rows import SINGLE_VALUE_FIELDS, AgreementRow, agreement_rows, codebooks_of
from .label_table import (
    CACHE_SECONDS,
    LabelTable,
    cached_by_content,
    content_digest,
    gc_paused,
    label_table,
    labels_version,
)
from .models import StudyAnnotator
from .overview_snapshot import stored_summary
from .selectors import annotator_pseudonyms, answers_without_item, item_status
from .services.overview_snapshot import overview_snapshot_store


def agreement_report(
    *, study: Study, pairs_in_every_scope: bool = True, is_pilot: bool = False
) -> list[AgreementRow]:
    """Agreement per label: the booleans and the exclusion over all items and per setting, and
    each tag of each setting's codebook (present/absent) over that setting's items.

    For each label and scope: one row over all annotators, then one per pair of annotators who
    labeled an item in common, then one per annotator against the final labels (items without
    a human final label, see :func:`~.selectors.human_final`, are left out of those). Raters are the study's annotators; an annotator who
    did not label an item is a missing rating. See :mod:`analysis.stats.agreement`
    for the statistics.

    ``pairs_in_every_scope=False`` keeps the pair and against-final rows of the single-value
    labels over all items only (what the overview shows): the pairs grow with the square of the
    number of annotators, at a few ms each.

    ``is_pilot=True`` reports the pilot annotation round's items instead of the real ones (never
    both: pilot labels never enter the real figures).
    """
    return _agreement_report(
        study=study,
        table=label_table(study=study, is_pilot=is_pilot),
        pairs_in_every_scope=pairs_in_every_scope,
    )


def _agreement_report(
    *, study: Study, table: LabelTable, pairs_in_every_scope: bool
) -> list[AgreementRow]:
    """:func:`agreement_report` from the study's :class:`~.label_table.LabelTable`, cached by
    the content of everything it depends on (:func:`~.label_table.cached_by_content`)."""
    annotators = sorted(table.labels_per_annotator)
    if not annotators:
        return []
    pseudonyms = annotator_pseudonyms(study=study)
    names = [pseudonyms.get(u, f"annotator_?{u}") for u in annotators]
    settings = list(Setting.objects.filter(study=study).order_by("kind", "position"))
    codebooks = codebooks_of(settings)
    inputs = (pairs_in_every_scope, names, [(s.pk, s.key) for s in settings], codebooks, table.digest)
    return cached_by_content(
        "agreement_report",
        inputs,
        lambda: agreement_rows(
            table=table, names=names, settings=settings, codebooks=codebooks,
            pairs_in_every_scope=pairs_in_every_scope,
        ),
    )


def kappa_matrices(*, rows: list[AgreementRow]) -> list[dict]:
    """Cohen's kappa, annotator x annotator and against the final labels, per single-value
    label over all items (scope ``all``), for the overview page.

    Returns
    -------
    list of dict
        ``{"field", "raters": [pseudonym, ...], "rows": [{"rater", "cells": [...]}, ...]}``,
        one row per rater with a cell per rater, then one for the final labels. A cell is
        ``{"kappa": Statistic, "n_items": int}``, with ``kappa`` ``None`` on the diagonal and
        where the two labeled no item in common.
    """
    empty = {"kappa": None, "n_items": 0}
    out = []
    for field in SINGLE_VALUE_FIELDS:
        scoped = [r for r in rows if r.field == field and r.scope == "all"]
        pairs = {}
        for r in scoped:
            if r.comparison == "all":
                continue
            cell = {"kappa": r.result.cohen_kappa, "n_items": r.result.n_items}
            pairs[(r.rater_a, r.rater_b)] = cell
            pairs[(r.rater_b, r.rater_a)] = cell
        raters = sorted(
            {r.rater_a for r in scoped if r.rater_a}
            | {r.rater_b for r in scoped if r.comparison == "pair"},
            key=_pseudonym_order,
        )
        if not raters:
            continue
        matrix = [
            {
                "rater": a,
                "cells": [empty if a == b else pairs.get((a, b), empty) for b in raters]
                + [pairs.get((a, "final"), empty)],
            }
            for a in raters
        ]
        out.append({"field": field, "raters": raters, "rows": matrix})
    return out


def _pseudonym_order(name: str) -> tuple:
    number = name.rsplit("_", 1)[-1]
    return (0, int(number), name) if number.isdigit() else (1, 0, name)


def researcher_overview(
    *, study: Study, with_agreement: bool = True, is_pilot: bool = False
) -> dict:
    """Progress figures for the researcher's annotation page: of the real items, or
    (``is_pilot=True``) of the pilot annotation round's, never both together.

    ``with_agreement=False`` leaves out ``agreement`` and ``kappa_matrices`` (the API's progress
    endpoint): computing them after a label change takes most of the time at 10,000
    participants.

    What is computed from every label is kept under the study's
    :func:`~.label_table.labels_version` (and the seats, settings, codebooks and k it also
    depends on), in this process's cache and as the study's
    :class:`~.models.OverviewSnapshot` for the other processes, so a request while no label
    changed reads no label (the snapshot is the one write a GET of the overview may make); the
    answers not yet items are counted each time.

    Returns
    -------
    dict
        ``items``: total items; ``status``: ``{"final", "needs_adjudication", "in_progress"}``
        counts; ``final_sources``: counts by final-label source; ``annotators``: list of
        ``{"pseudonym", "username", "labels"}`` (labels in this round); ``agreement``: the ``all`` rows of
        :func:`agreement_report`; ``kappa_matrices``: :func:`kappa_matrices` of the report.
    """
    # The version first: the labels read after it are at least as new (``labels_version``).
    version = labels_version(study=study)
    seats = list(StudyAnnotator.objects.filter(study=study).select_related("user").order_by("number"))
    settings = list(Setting.objects.filter(study=study).order_by("kind", "position"))
    codebooks = codebooks_of(settings)
    inputs = (
        study.pk, is_pilot, version, study.annotators_per_item, with_agreement,
        [(s.user_id, s.pseudonym) for s in seats], [(s.pk, s.key) for s in settings], codebooks,
    )
    summary = _kept_summary(study=study, is_pilot=is_pilot, with_agreement=with_agreement, inputs=inputs)
    status = dict(summary["status"])
    # Answers nobody has asked for yet are items in progress (the overview writes nothing);
    # they change as participants answer, without a label changing, so they are counted each time.
    status["in_progress"] += answers_without_item(study=study, pilot=is_pilot)
    out = {
        "items": sum(status.values()),
        "status": status,
        "final_sources": dict(summary["final_sources"]),
        "annotators": [
            {
                "pseudonym": s.pseudonym,
                "username": s.user.get_username(),
                "labels": summary["labels_per_user"].get(s.user_id, 0),
            }
            for s in seats
        ],
    }
    if with_agreement:
        out["agreement"] = summary["agreement"]
        out["kappa_matrices"] = summary["kappa_matrices"]
    return out


def _kept_summary(*, study: Study, is_pilot: bool, with_agreement: bool, inputs: tuple) -> dict:
    """:func:`_overview_summary`, from this process's cache, else from the study's stored
    snapshot, else computed (and kept in both), all under the digest of ``inputs``."""
    key = content_digest(*inputs)
    cache_key = f"spotlight:researcher_overview:{key}"
    summary = cache.get(cache_key)
    if summary is None:
        summary = stored_summary(study=study, is_pilot=is_pilot, key=key)
        if summary is None:
            with gc_paused():
                summary = _overview_summary(study=study, is_pilot=is_pilot, with_agreement=with_agreement)
            overview_snapshot_store(study=study, is_pilot=is_pilot, key=key, summary=summary)
        cache.set(cache_key, summary, CACHE_SECONDS)
    return summary


def _overview_summary(*, study: Study, is_pilot: bool, with_agreement: bool) -> dict:
    """What :func:`researcher_overview` computes from every label: item status and final-label
    source counts, labels per annotator (user id), and with ``with_agreement`` the agreement
    rows and kappa matrices. Kept by :func:`researcher_overview` under the labels' version."""
    k = study.annotators_per_item
    status: Counter = Counter({"final": 0, "needs_adjudication": 0, "in_progress": 0})
    sources: Counter = Counter()
    table = label_table(study=study, is_pilot=is_pilot)
    for n_labels, compared, final in zip(table.n_labels, table.compared, table.finals):
        status[item_status(annotations=range(n_labels), final=final, k=k, compared=compared)] += 1
        if final is not None:
            sources[final.source] += 1
    out = {
        "status": dict(status),
        "final_sources": dict(sources),
        "labels_per_user": dict(table.labels_per_annotator),
    }
    if with_agreement:
        report = _agreement_report(study=study, table=table, pairs_in_every_scope=False)
        out["agreement"] = [r for r in report if r.comparison == "all"]
        out["kappa_matrices"] = kappa_matrices(rows=report)
    return out
