"""The label import under a study's declared codebook: the columns it reads (those
``final_labels.csv`` writes: one per field, the 0/1 option columns ignored in favour of the joined
one) and a row's values for :func:`~spotlight_study.studies.codebook.values_clean`."""
from __future__ import annotations

from spotlight_study.studies.models import Study

from ..codebook_exports import codebook_columns, export_fields


def import_columns(study: Study) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(required, optional)`` columns under the study's declared codebook, or ``None`` under
    the default one (the parser's fixed columns apply)."""
    fields = export_fields(study)
    if not fields:
        return None
    return ("item", "exclusion"), (*codebook_columns(fields), "exclusion_note", "annotator")


def row_values(study: Study, values: dict[str, str]) -> dict[str, str | None]:
    """A row's codebook values as text by field key (``None`` for an empty or missing cell); a
    multi_choice field's joined column (``;``) is read, its 0/1 columns are not."""
    out: dict[str, str | None] = {}
    for field in study.annotation_codebook["fields"]:
        text = (values.get(field["key"]) or "").strip()
        out[field["key"]] = text or None
    return out
