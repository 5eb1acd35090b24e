"""Step 3 of the label import: valid rows to annotations and submitted places, all or nothing.

Runs under the pool lock (:mod:`spotlight_study.annotation.services.pool`) and re-checks the
k-annotators limit there, since places may have been taken between validation and write.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction

from spotlight_study.studies.models import Study

from ..errors import LabelImportError
from ..models import Annotation, Assignment
from ..services.final_labels import final_label_resolve
from ..services.labels import annotation_write, codebook_tags_add, label_clean
from ..services.pool import pool_lock, seat_ensure
from .validate import ImportRow, capacity_errors


@dataclass(frozen=True)
class ImportReport:
    """What a clean import did: ``created`` and ``updated`` annotations, ``tags_added``."""

    created: int
    updated: int
    tags_added: list[str]


def rows_write(*, study: Study, rows: list[ImportRow], now: datetime) -> tuple[int, int]:
    """Save each row as its annotator's label (source ``import``) and a submitted place, then
    resolve the final labels of the items touched.

    Returns ``(created, updated)`` annotations. Unknown usernames become users without a
    password (they cannot log in).

    Raises
    ------
    LabelImportError
        If, under the lock, a row would now give an item more than k annotators; nothing is
        written then.
    """
    created = updated = 0
    with transaction.atomic():
        pool_lock(study)
        late = capacity_errors(study=study, rows=rows, now=now)
        if late:  # places were taken since the check: refuse, change nothing
            raise LabelImportError(late)
        users: dict[str, object] = {}
        for row in rows:
            user = users.get(row.annotator) or _import_user(row.annotator)
            users[row.annotator] = user
            seat_ensure(study, user)
            fields, to_add = label_clean(label=row.label, setting=row.item.setting)
            codebook_tags_add(row.item.setting, to_add, None)
            exists = Annotation.objects.filter(item=row.item, annotator=user).exists()
            annotation_write(
                item=row.item,
                annotator=user,
                fields=fields,
                source=Annotation.Source.IMPORT,
                now=now,
            )
            Assignment.objects.update_or_create(
                item=row.item,
                annotator=user,
                defaults={
                    "state": Assignment.State.SUBMITTED,
                    "reserved_at": now,
                    "expires_at": now,
                    "submitted_at": now,
                },
            )
            updated += exists
            created += not exists
        for item in {row.item.pk: row.item for row in rows}.values():
            final_label_resolve(item=item, now=now)
    return created, updated


def _import_user(username: str):
    """The user named ``username``, created without a usable password if there is none."""
    User = get_user_model()
    user = User.objects.filter(username=username).first()
    if user is None:
        user = User(username=username)
        user.set_unusable_password()
        user.save()
    return user
