"""Agreement per field of a study's declared codebook, for the overview page and ``analyze``.

The annotators' values are read here and handed to :func:`analysis.codebook_analysis.field_agreement`
as an annotators x items array per field; the statistic each type gets is the table in
:mod:`analysis.measures`. Under the default codebook the overview's own agreement tables
(:func:`~.overview.agreement_report`) apply and this module gives nothing.
"""
from __future__ import annotations

from analysis.codebook_analysis import field_agreement
from analysis.measures import MEASURES

from spotlight_study.studies.models import Study

from .codebook_exports import export_fields
from .models import Annotation


def codebook_agreement(*, study: Study, is_pilot: bool | None = False) -> list[dict]:
    """:func:`~analysis.codebook_analysis.field_agreement` of every compared field of the
    study's declared codebook over its real items (``is_pilot`` True: the pilot round's; None:
    both), in codebook order; ``[]`` under the default codebook or before any label.

    Each entry also carries ``rows``: ``(statistic name, option or "", Statistic)`` for a page.
    """
    fields = [f for f in export_fields(study) if f["type"] != "note"]
    if not fields:
        return []
    labels = list(
        Annotation.objects.filter(item__study=study)
        .filter(**({} if is_pilot is None else {"item__is_pilot": is_pilot}))
        .order_by("item_id", "annotator_id")
        .values_list("item_id", "annotator_id", "values")
    )
    if not labels:
        return []
    items = sorted({i for i, _, _ in labels})
    annotators = sorted({a for _, a, _ in labels})
    col = {i: n for n, i in enumerate(items)}
    row = {a: n for n, a in enumerate(annotators)}
    out = []
    for field in fields:
        ratings: list[list] = [[None] * len(items) for _ in annotators]
        for item_id, annotator_id, values in labels:
            ratings[row[annotator_id]][col[item_id]] = values.get(field["key"])
        result = field_agreement(field, ratings)
        result["measure"] = MEASURES[field["type"]].scale
        if field["type"] == "multi_choice":
            result["rows"] = [("cohen_kappa", o, s["cohen_kappa"]) for o, s in result["options"].items()]
        else:
            result["rows"] = [(n, "", s) for n, s in result["statistics"].items()]
        out.append(result)
    return out
