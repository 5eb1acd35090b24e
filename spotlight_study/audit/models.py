"""The audit trail's one table.

A row names its study by id and slug as plain values, not a foreign key: the trail outlives the
rows it talks about (a removed member, an erased participant, even a deleted study), and the
audit app sits at the bottom of the layers (``pyproject.toml``), below ``studies``, so every app
may write to it. The author is kept twice for the same reason: a foreign key to the user
(``NULL`` once the account is deleted) and the username as it was.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEntry(models.Model):
    """One decision: ``action`` (a dotted code such as ``membership.add``), by ``actor`` at
    ``created_at``, about study ``study_id`` (``None`` for an instance-wide decision), with
    ``detail`` (a JSON object of plain values: never a secret, never a participant's Prolific id)."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The username when the decision was made; "" for a command or task run without a user.
    actor_username = models.CharField(max_length=150, blank=True)
    study_id = models.BigIntegerField(null=True, blank=True)
    study_slug = models.CharField(max_length=100, blank=True)
    action = models.CharField(max_length=64)
    summary = models.CharField(max_length=500, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study_id", "-created_at"], name="audit_study_time")]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        who = self.actor_username or "system"
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {who} {self.action} {self.study_slug}"
