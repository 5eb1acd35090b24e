"""Annotation exports (researchers only): ``annotations.csv``, ``final_labels.csv`` and
``agreement.csv``. Columns are documented in ``docs/annotation.md``.

Annotators appear only as pseudonyms (``annotator_<n>``); participants only as their export
pseudonym (``p_`` + 16 hex digits, as in ``responses.csv``).

Every file has an ``is_pilot`` column (1 for the pilot annotation round, :mod:`.pilot_round`).
``annotations.csv`` and ``final_labels.csv`` hold the real items only unless ``include_pilot``;
``agreement.csv`` holds the real items' rows and, computed apart, the pilot round's rows.
"""

from __future__ import annotations

import io
from pathlib import Path

from spotlight_study.csvsafe import SafeDictWriter
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.studies.models import Study

from .codebook_exports import cell, codebook_cells, codebook_columns, export_fields
from .machine_agreement import machine_agreement
from .models import LABEL_FIELDS
from .overview import agreement_report
from .selectors import (
    annotator_pseudonyms,
    item_status,
    items_with_labels,
)
from .services.queue import items_sync

ANNOTATIONS_COLUMNS = [
    "item", "setting", "annotator", "field", "value", "revision", "saved_at", "is_pilot",
]
FINAL_LABELS_COLUMNS = [
    "item",
    "participant",
    "setting",
    "kind",
    "condition",
    "status",
    "identified",
    "surface_difference",
    "no_difference",
    "other_difference",
    "tags",
    "exclusion",
    "exclusion_note",
    "source",
    "decided_at",
    # Only for source ``machine``: ``llm:<model>`` and the accepted fields (``;``-separated).
    "machine_model",
    "machine_fields",
    "is_pilot",
]
AGREEMENT_COLUMNS = [
    "field",
    "scope",
    "comparison",
    "rater_a",
    "rater_b",
    "n_items",
    "n_annotators",
    "n_ratings",
    "percent_agreement",
    "percent_agreement_note",
    "cohen_kappa",
    "cohen_kappa_note",
    "krippendorff_alpha",
    "krippendorff_alpha_note",
    # The machine coder's rows (comparison machine_vs_human, machine_vs_final, human_vs_human)
    # add a paired bootstrap 95% CI of kappa and, on machine_vs_final, the decision rule.
    "cohen_kappa_ci_low",
    "cohen_kappa_ci_high",
    "cohen_kappa_ci_note",
    "human_kappa",
    "margin",
    "non_inferior",
    "decision",
    "is_pilot",
]
EXPORTS = ("annotations", "final_labels", "agreement")
#: The columns of the default codebook's fields, replaced by a declared codebook's own.
DEFAULT_LABEL_COLUMNS = ("identified", "surface_difference", "no_difference", "other_difference", "tags")


def final_label_columns(study: Study) -> list[str]:
    """``final_labels.csv``'s columns: :data:`FINAL_LABELS_COLUMNS`, or under a declared
    codebook its columns (:func:`~.codebook_exports.codebook_columns`) in place of the default
    codebook's."""
    fields = export_fields(study)
    if not fields:
        return FINAL_LABELS_COLUMNS
    at = FINAL_LABELS_COLUMNS.index("identified")
    rest = [c for c in FINAL_LABELS_COLUMNS[at:] if c not in DEFAULT_LABEL_COLUMNS]
    return [*FINAL_LABELS_COLUMNS[:at], *codebook_columns(fields), *rest]


def _value(field: str, value) -> str | int:
    if value is None:  # a field an accepted machine label leaves without a final value
        return ""
    if field == "tags":
        return ";".join(sorted(value))
    if isinstance(value, bool):
        return int(value)
    return value


def _rounds(include_pilot: bool) -> bool | None:
    # items_with_labels' is_pilot: the real items, or both rounds.
    return None if include_pilot else False


def annotations_rows(*, study: Study, include_pilot: bool = False) -> list[dict]:
    """One row per item x annotator x label field (:data:`~.models.LABEL_FIELDS`).

    ``value``: booleans as 0/1, tags ``;``-separated; ``saved_at``: ISO 8601 UTC of the
    annotator's last save; ``revision``: how many times they saved it; ``is_pilot``: 1 for a
    pilot round's item (only with ``include_pilot``).
    """
    pseudonyms = annotator_pseudonyms(study=study)
    fields = export_fields(study)
    rows = []
    for item in items_with_labels(study=study, is_pilot=_rounds(include_pilot)):
        for a in sorted(item.annotations.all(), key=lambda a: pseudonyms.get(a.annotator_id, "")):
            # A declared codebook's fields (values joined by ";"), then the platform's exclusion.
            values = {f["key"]: cell(f, {**a.values, **a.notes}.get(f["key"])) for f in fields}
            names = [*values, "exclusion", "exclusion_note"] if fields else LABEL_FIELDS
            for field in names:
                rows.append(
                    {
                        "item": item.public_id,
                        "setting": item.setting.key,
                        "annotator": pseudonyms.get(a.annotator_id, "annotator_?"),
                        "field": field,
                        "value": values[field] if field in values else _value(field, getattr(a, field)),
                        "revision": a.revision,
                        "saved_at": a.updated_at.isoformat(),
                        "is_pilot": int(item.is_pilot),
                    }
                )
    return rows


def final_label_rows(*, study: Study, include_pilot: bool = False) -> list[dict]:
    """One row per saved answer (item) of a real participant, joined to participant pseudonym,
    setting, kind and condition; with ``include_pilot`` the pilot round's items follow the real
    ones (``is_pilot`` 1). Answers without an item get one first
    (:func:`~.services.queue.items_sync`).

    ``status`` is ``final``, ``needs_adjudication`` or ``in_progress``; the label columns are
    empty unless final. ``other_difference`` is 1 when the final label has at least one tag.
    ``source`` is ``agreement``, ``adjudication`` or ``machine`` (the machine coder's label,
    accepted by the researcher for the fields in ``machine_fields``, with ``machine_model``;
    the other label columns are empty). An adjudicator may still decide such an item when its
    human labels disagree; their decision replaces the machine label.
    """
    items_sync(study=study)  # every saved answer is a row, also before anyone opened it
    k = study.annotators_per_item
    fields = export_fields(study)
    items = sorted(
        items_with_labels(study=study, is_pilot=_rounds(include_pilot)).select_related(
            "response__participant"
        ),
        key=lambda it: (it.is_pilot, it.pk),
    )
    rows = []
    for item in items:
        final = getattr(
            item, "final_label", None
        )  # the missing reverse one-to-one is an AttributeError
        participant = item.response.participant
        row = {
            "item": item.public_id,
            "participant": participant_pseudonym(
                study=study, prolific_pid=participant.prolific_pid
            ),
            "setting": item.setting.key,
            "kind": item.setting.kind,
            "condition": item.response.condition,
            "status": item_status(annotations=list(item.annotations.all()), final=final, k=k),
            "is_pilot": int(item.is_pilot),
        }
        if final is not None:
            if fields:
                row.update(codebook_cells(fields, final))
                row.update(exclusion=_value("exclusion", final.exclusion),
                           exclusion_note=final.exclusion_note)
            else:
                row.update({f: _value(f, getattr(final, f)) for f in LABEL_FIELDS})
                row["other_difference"] = "" if final.tags is None else int(bool(final.tags))
            row.update(
                source=final.source,
                decided_at=final.decided_at.isoformat(),
            )
            if final.source == final.Source.MACHINE:
                row.update(
                    machine_model=f"llm:{final.machine_model}",
                    machine_fields=";".join(final.machine_fields),
                )
        rows.append(row)
    return rows


def _stat(stat) -> tuple[str, str]:
    return ("" if stat.value is None else round(stat.value, 6), stat.undefined_reason)


def _agreement_row(r, scope: str) -> dict:
    """The columns of ``agreement.csv`` that every row has, from one agreement result ``r``
    (human or machine): who is compared, the counts, and each statistic with its note."""
    a = r.result
    row = {
        "field": r.field,
        "scope": scope,
        "comparison": r.comparison,
        "rater_a": r.rater_a,
        "rater_b": r.rater_b,
        "n_items": a.n_items,
        "n_annotators": a.n_annotators,
        "n_ratings": a.n_ratings,
    }
    for name in ("percent_agreement", "cohen_kappa", "krippendorff_alpha"):
        row[name], row[f"{name}_note"] = _stat(getattr(a, name))
    return row


def agreement_rows(*, study: Study) -> list[dict]:
    """One row per label, scope and comparison (see :func:`~.overview.agreement_report`):
    ``comparison`` ``all`` (every annotator), ``pair`` (``rater_a`` x ``rater_b``, annotator
    pseudonyms) or ``vs_final`` (``rater_a`` against ``final``), then the machine coder's rows.

    First the real items' rows (``is_pilot`` 0), then the same rows computed over the pilot
    annotation round's items alone (``is_pilot`` 1; none while no pilot item has a label).
    An undefined statistic has an empty value and its reason in the ``*_note`` column.
    """
    rows = []
    for is_pilot in (False, True):
        part = [_agreement_row(r, r.scope) for r in agreement_report(study=study, is_pilot=is_pilot)]
        part += machine_agreement_rows(study=study, is_pilot=is_pilot)
        rows += [dict(row, is_pilot=int(is_pilot)) for row in part]
    return rows


def machine_agreement_rows(*, study: Study, is_pilot: bool = False) -> list[dict]:
    """The machine coder's rows of ``agreement.csv`` (:func:`~.machine_agreement.machine_agreement`
    with the default margin): scope ``all``, ``rater_a`` ``llm:<model>`` (or an annotator for
    ``human_vs_human``). ``non_inferior`` is 1, 0 or empty (undecided); ``decision`` the rule's
    statement in words; both only on ``machine_vs_final`` rows. ``is_pilot``: over the pilot
    round's items instead of the real ones."""
    rows_, decisions = machine_agreement(study=study, is_pilot=is_pilot)
    by_key = {(d.model, d.field): d for d in decisions}
    out = []
    for r in rows_:
        row = _agreement_row(r, "all")
        row["cohen_kappa_ci_low"], row["cohen_kappa_ci_note"] = _stat(r.ci.ci_low)
        row["cohen_kappa_ci_high"] = _stat(r.ci.ci_high)[0]
        if r.comparison == "machine_vs_final":
            rule = by_key[(r.model, r.field)].rule
            row.update(
                human_kappa="" if rule.human_kappa is None else round(rule.human_kappa, 6),
                margin=rule.margin,
                non_inferior="" if rule.non_inferior is None else int(rule.non_inferior),
                decision=rule.statement,
            )
        out.append(row)
    return out


_BUILDERS = {
    "annotations": (ANNOTATIONS_COLUMNS, annotations_rows),
    "final_labels": (FINAL_LABELS_COLUMNS, final_label_rows),
    "agreement": (AGREEMENT_COLUMNS, agreement_rows),
}


def export_csv_text(*, study: Study, name: str, include_pilot: bool = False) -> str:
    """One export as CSV text. ``name`` is one of :data:`EXPORTS`; raises ``KeyError`` otherwise.

    ``include_pilot`` adds the pilot round's items to ``annotations.csv`` and
    ``final_labels.csv`` (``agreement.csv`` always reports the pilot round apart).
    """
    columns, build = _BUILDERS[name]
    if name == "final_labels":
        columns = final_label_columns(study)
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=columns)
    writer.writeheader()
    if name == "agreement":
        writer.writerows(build(study=study))
    else:
        writer.writerows(build(study=study, include_pilot=include_pilot))
    return buffer.getvalue()


def annotations_export(
    *, study: Study, out_dir: str | Path, include_pilot: bool = False
) -> dict[str, Path]:
    """Write ``annotations.csv``, ``final_labels.csv`` and ``agreement.csv`` (UTF-8) into
    ``out_dir`` (created if needed), the pilot round's items too with ``include_pilot``.
    Returns ``{name: path}``; raises ``OSError`` if it cannot."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in EXPORTS:
        path = out / f"{name}.csv"
        text = export_csv_text(study=study, name=name, include_pilot=include_pilot)
        path.write_text(text, encoding="utf-8", newline="")
        paths[name] = path
    return paths
