"""The audit trail of erasures and purges. It never holds a Prolific ID or a pseudonym."""
from __future__ import annotations

import uuid

from django.db import models

from spotlight_study.studies.models import Study


class PrivacyAction(models.Model):
    """One erasure (``erase``) or identifier purge (``purge``) done on a study.

    ``reference`` is a random id to quote to the participant or the ethics board instead of the
    PID. ``rows`` counts what was changed, by kind (``{"task_responses": 3, ...}``). For an
    erasure, ``cell_index`` and ``participant_status`` say what the erased participant held (so
    the flow of participants can still be reported: "n erased on request, cell c") and are
    ``None``/``""`` when only Prolific records were found. ``performed_by`` is who ran the command
    (the operating-system user or a name given with ``--by``); ``note`` is free text such as a
    ticket number, refused if it contains the PID. A study with entries cannot be deleted
    (``PROTECT``), so the trail outlives the data it describes.
    """

    class Kind(models.TextChoices):
        ERASE = "erase", "Erasure of one participant"
        PURGE = "purge", "Raw Prolific IDs replaced by pseudonyms"

    reference = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="privacy_actions")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    rows = models.JSONField(default=dict)
    cell_index = models.PositiveIntegerField(null=True, blank=True)
    participant_status = models.CharField(max_length=20, blank=True)
    was_pilot = models.BooleanField(null=True, blank=True)
    performed_by = models.CharField(max_length=150, blank=True)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference} on {self.study_id}"
