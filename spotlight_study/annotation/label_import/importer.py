"""The label import as one call: :func:`labels_import` (text) and :func:`labels_import_file`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from django.utils import timezone

from spotlight_study.studies.models import Study

from ..errors import LabelImportError
from ..services.queue import items_sync
from .codebook_columns import import_columns
from .parse import csv_parse
from .validate import capacity_errors, rows_validate
from .write import ImportReport, rows_write


def labels_import(
    *,
    study: Study,
    text: str,
    annotator_name: str | None = None,
    add_tags: bool = False,
    now: datetime | None = None,
) -> ImportReport:
    """Import labels made elsewhere (e.g. in a spreadsheet) as annotations of ``study``.

    Parameters
    ----------
    text : str
        CSV with a header: ``item`` (the opaque item id), ``identified``, ``surface_difference``,
        ``no_difference`` (1/0, true/false, yes/no), ``exclusion`` (see
        :class:`~spotlight_study.annotation.models.Exclusion`; empty means ``none``), optional
        ``tags`` (``;``-separated), ``exclusion_note`` and ``annotator`` (a username; else
        ``annotator_name``).
    annotator_name : str, optional
        Username for rows without an ``annotator`` value. Unknown usernames become users
        without a password (they cannot log in).
    add_tags : bool
        Add tags that are not in the codebook instead of reporting them as errors.

    Returns
    -------
    ImportReport

    Raises
    ------
    LabelImportError
        With every bad row by line number (the header is line 1), or the line of a NUL
        character. Nothing is changed then.

    Notes
    -----
    Parse (:mod:`.parse`), validate (:mod:`.validate`), write (:mod:`.write`). Imported labels
    count as submitted places: an item may not end with more than k annotators. An annotator's
    existing label of an item is replaced (last save wins; the history is kept). Agreement and
    adjudication then work as for labels made on the site.
    """
    now = now or timezone.now()
    items_sync(study=study)  # answers nobody has opened yet can be labeled too
    raw_rows, errors = csv_parse(text, annotator_name=annotator_name, columns=import_columns(study))
    checked = rows_validate(
        study=study, rows=raw_rows, annotator_name=annotator_name, add_tags=add_tags
    )
    errors = sorted(errors + checked.errors)
    if not errors:
        errors = capacity_errors(study=study, rows=checked.rows, now=now)
    if errors:
        raise LabelImportError(errors)
    created, updated = rows_write(study=study, rows=checked.rows, now=now)
    added = sorted({t for tags in checked.new_tags.values() for t in tags})
    return ImportReport(created=created, updated=updated, tags_added=added)


def labels_import_file(*, study: Study, path: str | Path, **kwargs) -> ImportReport:
    """Read a UTF-8 CSV file and :func:`labels_import` it (``kwargs`` as there).

    Raises :class:`LabelImportError` also for a missing or undecodable file (line 0).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelImportError([(0, f"no such file: {path}")]) from None
    except UnicodeDecodeError as exc:
        raise LabelImportError([(0, f"not UTF-8 text: {exc}")]) from None
    return labels_import(study=study, text=text, **kwargs)

