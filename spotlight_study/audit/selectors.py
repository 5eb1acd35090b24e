"""Reading the audit trail: a study's entries for its page and its CSV export."""
from __future__ import annotations

import io
import json

from django.db.models import QuerySet

from spotlight_study.csvsafe import SafeDictWriter

from .models import AuditEntry

CSV_COLUMNS = ("time_utc", "actor", "action", "summary", "detail")


def audit_entries(*, study_id: int) -> QuerySet[AuditEntry]:
    """The study's audit entries, newest first."""
    return AuditEntry.objects.filter(study_id=study_id).order_by("-created_at", "-id")


def audit_csv(*, study_id: int) -> str:
    """The study's audit trail as CSV text (oldest first), columns :data:`CSV_COLUMNS`.

    Every cell goes through the project's spreadsheet guard (:mod:`spotlight_study.csvsafe`),
    so a username or summary beginning with ``=`` cannot run as a formula. ``detail`` is the
    entry's JSON, keys sorted.
    """
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in audit_entries(study_id=study_id).order_by("created_at", "id").iterator():
        writer.writerow(
            {
                "time_utc": entry.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "actor": entry.actor_username or "(system)",
                "action": entry.action,
                "summary": entry.summary,
                "detail": json.dumps(entry.detail, sort_keys=True),
            }
        )
    return buffer.getvalue()
