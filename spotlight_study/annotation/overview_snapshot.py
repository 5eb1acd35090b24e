"""The researcher overview's summary as JSON, for :class:`~.models.OverviewSnapshot`, and its
read: every number and text as computed, so a summary read back equals the one stored
(``tests/annotation/test_labels_version.py`` checks it on a labelled study)."""
from __future__ import annotations

import math

from analysis.stats.agreement import Agreement, Statistic
from spotlight_study.studies.models import Study

from .agreement_rows import AgreementRow
from .models import OverviewSnapshot


class NotStorable(ValueError):
    """A summary holds a number JSON cannot carry (NaN or an infinity): it is not stored."""


def _statistic(value: Statistic | None) -> list | None:
    if value is None:
        return None
    if value.value is not None and not math.isfinite(value.value):
        raise NotStorable(f"{value.value!r} has no JSON form")
    return [value.value, value.undefined_reason]


def _statistic_back(value: list | None) -> Statistic | None:
    return None if value is None else Statistic(value[0], value[1])


def _agreement(result: Agreement) -> list:
    return [result.n_items, result.n_annotators, result.n_ratings,
            _statistic(result.percent_agreement), _statistic(result.cohen_kappa),
            _statistic(result.krippendorff_alpha)]


def _agreement_back(value: list) -> Agreement:
    n_items, n_annotators, n_ratings, percent, kappa, alpha = value
    return Agreement(n_items, n_annotators, n_ratings, _statistic_back(percent),
                     _statistic_back(kappa), _statistic_back(alpha))


def summary_to_json(summary: dict) -> dict:
    """The summary of :func:`~.overview.researcher_overview` (``status``, ``final_sources``,
    ``labels_per_user`` by user id, and optionally ``agreement`` rows and ``kappa_matrices``) as
    JSON values. Raises :class:`NotStorable` for a NaN or an infinity."""
    out = {
        "status": summary["status"],
        "final_sources": summary["final_sources"],
        # JSON object keys are text; the user ids stay numbers as pairs.
        "labels_per_user": sorted([user, n] for user, n in summary["labels_per_user"].items()),
    }
    if "agreement" in summary:
        out["agreement"] = [
            [r.field, r.scope, r.comparison, r.rater_a, r.rater_b, _agreement(r.result)]
            for r in summary["agreement"]
        ]
        out["kappa_matrices"] = [
            {**m, "rows": [
                {"rater": row["rater"], "cells": [
                    {"kappa": _statistic(c["kappa"]), "n_items": c["n_items"]} for c in row["cells"]
                ]}
                for row in m["rows"]
            ]}
            for m in summary["kappa_matrices"]
        ]
    return out


def summary_from_json(value: dict) -> dict:
    """The inverse of :func:`summary_to_json`."""
    out = {
        "status": value["status"],
        "final_sources": value["final_sources"],
        "labels_per_user": {user: n for user, n in value["labels_per_user"]},
    }
    if "agreement" in value:
        out["agreement"] = [
            AgreementRow(field, scope, _agreement_back(result), comparison, rater_a, rater_b)
            for field, scope, comparison, rater_a, rater_b, result in value["agreement"]
        ]
        out["kappa_matrices"] = [
            {**m, "rows": [
                {"rater": row["rater"], "cells": [
                    {"kappa": _statistic_back(c["kappa"]), "n_items": c["n_items"]}
                    for c in row["cells"]
                ]}
                for row in m["rows"]
            ]}
            for m in value["kappa_matrices"]
        ]
    return out


def stored_summary(*, study: Study, is_pilot: bool, key: str) -> dict | None:
    """The summary stored for the study's round under ``key``, or None (none stored, or one
    under another key). One query."""
    value = (
        OverviewSnapshot.objects.filter(study=study, is_pilot=is_pilot, key=key)
        .values_list("summary", flat=True)
        .first()
    )
    return None if value is None else summary_from_json(value)
