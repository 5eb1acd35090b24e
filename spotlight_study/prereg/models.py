"""One preregistered plan version of a study."""
from __future__ import annotations

import json

from django.db import models

from spotlight_study.studies.models import Study


class PlanVersion(models.Model):
    """A frozen analysis plan. Rows are only ever added, never changed or deleted by the app.

    ``canonical_json`` holds the exact bytes (as UTF-8 text) that ``plan_sha256`` is the SHA-256
    of (keys sorted, no whitespace; :func:`analysis.plan_hash.canonical_json`), so the record can
    be checked without re-serialising. ``study_status`` is the study's status when the version was
    registered; ``reason`` is why it replaces the previous version (required once the study is
    live).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="plan_versions")
    version = models.PositiveIntegerField()
    canonical_json = models.TextField()
    plan_sha256 = models.CharField(max_length=64)
    definition_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of the study definition participants see."
    )
    planned_n = models.PositiveIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    study_status = models.CharField(max_length=10)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="prereg_unique_version"),
            models.UniqueConstraint(fields=["study", "plan_sha256"], name="prereg_unique_hash"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="prereg_version_gte_1"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} plan v{self.version} ({self.plan_sha256[:12]})"

    @property
    def plan(self) -> dict:
        """The plan as a dict (parsed from ``canonical_json``)."""
        return json.loads(self.canonical_json)
