"""The researcher app's table: one row per analysis run, from the page, the API or the command line.

A run's outputs (``report.html``, ``report.md``, ``results.json``, ``tables/``, ``figures/``,
``plan.json``) are kept in the ``analysis`` storage (``STORAGES["analysis"]``: the file system
under ``var/`` by default, an S3-compatible store with several servers, docs/scaling.md) under
:attr:`AnalysisRun.storage_prefix`; the row says what was analysed and with what.
"""
from __future__ import annotations

from django.db import models

from spotlight_study.stimuli.models import ACTIVE_STATUSES, Job

#: Who starts a run that no logged-in person started (``manage.py analyze``).
COMMAND_LINE = "command line"


class AnalysisRun(Job):
    """One run of the study analysis (:func:`analysis.run_analysis` on the study's export).

    It is a background job (:class:`~spotlight_study.stimuli.models.Job`: ``status``,
    ``stage``, ``done`` of ``total`` stages, ``started_at``/``finished_at``, ``created_by``)
    whether the page started it (a Celery task or a thread) or the command line ran it in its own
    process. At most one run of a study is queued or running at a time (a database constraint).

    Attributes beyond the job's: ``origin`` (page, API or command line), ``include_pilot``,
    ``use_plan`` (cite the study's latest preregistered plan), ``margin`` (the machine coder's
    non-inferiority margin in kappa units, ``None`` for the default), and once it succeeded
    ``input_sha256`` (of the export analysed), ``plan_sha256``/``plan_version`` (the plan cited,
    empty/``None`` without one), ``software`` (``{package: version}``), ``files``
    (``[{"name": "figures/likert.svg", "size": bytes}]``, sorted by name) and ``storage_prefix``
    (``analysis/<slug>/<id>/``).
    """

    class Origin(models.TextChoices):
        PAGE = "page", "researcher page"
        API = "api", "API"
        COMMAND_LINE = "command_line", COMMAND_LINE

    study = models.ForeignKey("studies.Study", on_delete=models.CASCADE, related_name="analysis_runs")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.PAGE)
    include_pilot = models.BooleanField(default=False)
    use_plan = models.BooleanField(default=True)
    margin = models.FloatField(null=True, blank=True)
    input_sha256 = models.CharField(max_length=64, blank=True)
    plan_sha256 = models.CharField(max_length=64, blank=True)
    plan_version = models.PositiveIntegerField(null=True, blank=True)
    software = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=list, blank=True)
    storage_prefix = models.CharField(max_length=300, blank=True)

    class Meta(Job.Meta):
        constraints = Job.Meta.constraints + [
            # Two servers asked at once: the second insert fails here, whatever the first saw.
            models.UniqueConstraint(
                fields=["study"],
                condition=models.Q(status__in=[str(s) for s in ACTIVE_STATUSES]),
                name="researcher_analysisrun_one_active_per_study",
            ),
        ]
        indexes = [models.Index(fields=["study", "-created_at"], name="researcher_run_study_created")]

    def __str__(self) -> str:
        return f"Analysis run {self.pk} of {self.study_id}"

    @property
    def started_by(self) -> str:
        """Who started the run: ``"command line"``, or the user name (``"(deleted user)"``)."""
        if self.origin == self.Origin.COMMAND_LINE:
            return COMMAND_LINE
        return self.created_by.get_username() if self.created_by else "(deleted user)"
