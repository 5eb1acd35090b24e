"""Stimulus preparation models.

A :class:`StimulusSet` holds two groups of LLM outputs (imported or generated). A
:class:`MiningJob` tokenizes them and mines :class:`MinedPattern` rows (Premise or c-TF-IDF). A
researcher then builds a study :class:`~spotlight_study.studies.models.Setting` from a mining job;
:class:`SettingSource` records how (patterns, sampling seed, chosen outputs).

Generation and mining run as background jobs (see ``docs/stimuli.md``); both keep their progress
(``done`` of ``total``) in the database, where the pages and the JSON progress view read it.
"""
from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

GROUPS = [(1, "Group 1"), (2, "Group 2")]


class JobStatus(models.TextChoices):
    """Life cycle of a background job: queued -> running -> succeeded | failed | cancelled."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (JobStatus.QUEUED, JobStatus.RUNNING)
#: The error of a queued job that could not be sent to the Celery broker (``jobs/runner.py``).
WAITING_FOR_BROKER = (
    "Waiting for the job queue (the Celery broker cannot be reached). The job is sent as soon "
    "as the broker is back; Resume sends it again now."
)


class Job(models.Model):
    """Fields shared by background jobs.

    ``done``/``total`` count the units of the current ``stage`` (outputs generated, outputs
    tokenized, patterns stored). ``run_id`` names the run that holds the job (a Celery task id or a
    random id); ``heartbeat_at`` is refreshed while it works, so a job whose runner died can be
    told from one that is still working (see ``STIMULI_JOB_STALE_SECONDS``).
    """

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    stage = models.CharField(max_length=30, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="The last error, as shown to the researcher.")
    run_id = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=models.Q(done__lte=models.F("total")),
                name="%(app_label)s_%(class)s_done_lte_total",
            ),
        ]

    @property
    def is_active(self) -> bool:
        """Queued or running (not finished)."""
        return self.status in ACTIVE_STATUSES


class StimulusSet(models.Model):
    """Two groups of LLM outputs, e.g. stories about "Dr. Smith" (group 1) and "Dr. Li" (group 2)."""

    class Source(models.TextChoices):
        IMPORTED = "imported", "Imported"
        GENERATED = "generated", "Generated"

    title = models.CharField(max_length=200)
    source = models.CharField(max_length=10, choices=Source.choices)
    group1_label = models.TextField(blank=True, help_text="E.g. the prompt of group 1.")
    group2_label = models.TextField(blank=True, help_text="E.g. the prompt of group 2.")
    source_detail = models.CharField(
        max_length=500, blank=True, help_text="Where the outputs came from (file names, format)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.title


class Output(models.Model):
    """One LLM output of one group. ``index`` is its 0-based position in the group.

    ``tokens`` (a list of strings) is filled by the first mining job with the spaCy pipeline named
    in ``tokenizer`` (``""`` means ``spacy.blank("en")``); ``None`` means not tokenized yet.
    The unique (set, group, index) is what makes a restarted generation job unable to duplicate.
    """

    stimulus_set = models.ForeignKey(StimulusSet, on_delete=models.CASCADE, related_name="outputs")
    group = models.PositiveSmallIntegerField(choices=GROUPS)
    index = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    tokens = models.JSONField(null=True, blank=True)
    tokenizer = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["stimulus_set", "group", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["stimulus_set", "group", "index"], name="stimuli_output_unique_index"
            ),
            models.CheckConstraint(condition=models.Q(group__in=[1, 2]), name="stimuli_output_group_1_or_2"),
        ]

    def __str__(self) -> str:
        return f"{self.stimulus_set_id}/g{self.group}/{self.index}"


class GenerationJob(Job):
    """Generate ``n_per_group`` outputs per group with an OpenAI-compatible Chat Completions API.

    Request ``i`` of a group is sent with ``seed + i`` when ``seed`` is set, so that the outputs
    differ from each other while a rerun asks for the same ones. ``base_url`` records the server
    (never the API key, which stays in the environment).
    """

    stimulus_set = models.OneToOneField(
        StimulusSet, on_delete=models.CASCADE, related_name="generation_job"
    )
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    prompt_group1 = models.TextField()
    prompt_group2 = models.TextField()
    n_per_group = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5000)]
    )
    temperature = models.FloatField(
        default=1.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    top_p = models.FloatField(default=1.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    max_tokens = models.PositiveIntegerField(
        default=256, validators=[MinValueValidator(1), MaxValueValidator(100_000)]
    )
    seed = models.BigIntegerField(null=True, blank=True)

    class Meta(Job.Meta):
        constraints = Job.Meta.constraints + [
            models.CheckConstraint(
                condition=models.Q(n_per_group__gte=1), name="stimuli_generation_n_gte_1"
            ),
            models.CheckConstraint(
                condition=models.Q(temperature__gte=0, temperature__lte=2),
                name="stimuli_generation_temperature_0_2",
            ),
            models.CheckConstraint(
                condition=models.Q(top_p__gte=0, top_p__lte=1), name="stimuli_generation_top_p_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"Generation for {self.stimulus_set}"


class ImportJob(Job):
    """Read uploaded output files in the background and store their outputs in the set.

    A file too large to read within a request (over ``STIMULI_INLINE_IMPORT_BYTES``) is kept
    here, as uploaded, until the job has read it: in the database, so that a Celery worker on
    another machine can read it too. The bytes are emptied when the job ends (succeeded or
    failed). ``options`` are :class:`~.importers.ImportOptions` as a dict. Stages: ``read``
    (0/1: decoding and parsing), ``store`` (outputs stored, of all).
    """

    stimulus_set = models.OneToOneField(StimulusSet, on_delete=models.CASCADE, related_name="import_job")
    file1_name = models.CharField(max_length=255)
    file1_data = models.BinaryField(default=bytes)
    file2_name = models.CharField(max_length=255, blank=True)
    file2_data = models.BinaryField(null=True, blank=True)
    options = models.JSONField(default=dict)

    class Meta(Job.Meta):
        pass

    def __str__(self) -> str:
        return f"Import for {self.stimulus_set}"


class MiningJob(Job):
    """Tokenize a stimulus set and mine token patterns with one method.

    ``params`` holds the method's parameters (Premise: ``fisher_p_value``, ``clause_max_overlap``,
    ``min_overlap``; c-TF-IDF: ``top_k``). ``n_group1``/``n_group2`` are the outputs mined (outputs
    without any token are left out and counted in ``n_excluded``). ``timings_ms`` gives the time
    per stage (``tokenize``, ``mine``, ``store``) in milliseconds.
    """

    class Method(models.TextChoices):
        PREMISE = "premise", "Premise (Hedderich et al. 2022)"
        CTFIDF = "ctfidf", "c-TF-IDF (Grootendorst 2022, BERTopic)"

    stimulus_set = models.ForeignKey(StimulusSet, on_delete=models.CASCADE, related_name="mining_jobs")
    method = models.CharField(max_length=10, choices=Method.choices, default=Method.PREMISE)
    pipeline = models.CharField(
        max_length=100, blank=True, help_text='spaCy pipeline; empty means spacy.blank("en").'
    )
    params = models.JSONField(default=dict, blank=True)
    n_group1 = models.PositiveIntegerField(null=True, blank=True)
    n_group2 = models.PositiveIntegerField(null=True, blank=True)
    n_excluded = models.PositiveIntegerField(default=0)
    timings_ms = models.JSONField(default=dict, blank=True)

    class Meta(Job.Meta):
        pass

    def __str__(self) -> str:
        return f"{self.get_method_display()} on {self.stimulus_set}"


class MinedPattern(models.Model):
    """One mined token pattern: a conjunction of clauses, each an "or" of tokens.

    ``group`` is the group where the pattern is relatively more frequent; ``count_group1`` and
    ``count_group2`` are the outputs of each group containing the pattern. ``mdl_gain`` is
    Premise's change in description length in bits (negative: the pattern compresses; more
    negative is better); ``fisher_p`` is the one-sided Fisher exact p-value of the pattern in its
    group. c-TF-IDF patterns have a single token, ``mdl_gain`` ``None`` and a ``score``.
    """

    mining_job = models.ForeignKey(MiningJob, on_delete=models.CASCADE, related_name="patterns")
    rank = models.PositiveIntegerField(help_text="Order in which the method reported it, from 0.")
    clauses = models.JSONField()
    group = models.PositiveSmallIntegerField(choices=GROUPS)
    count_group1 = models.PositiveIntegerField()
    count_group2 = models.PositiveIntegerField()
    mdl_gain = models.FloatField(null=True, blank=True)
    fisher_p = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["mining_job", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["mining_job", "rank"], name="stimuli_pattern_unique_rank"),
            models.CheckConstraint(condition=models.Q(group__in=[1, 2]), name="stimuli_pattern_group_1_or_2"),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def tokens(self) -> list[str]:
        """All tokens of all clauses, first occurrence first (the form a setting's box shows)."""
        return list(dict.fromkeys(tok for clause in self.clauses for tok in clause))

    @property
    def clauses_text(self) -> str:
        """Premise's notation, e.g. ``(He or he) and (his)``."""
        return " and ".join("(" + " or ".join(clause) + ")" for clause in self.clauses)

    @property
    def label(self) -> str:
        """E.g. ``(maize) (more often in group 2)``."""
        return f"{self.clauses_text} (more often in group {self.group})"


class SettingSource(models.Model):
    """How a study setting was built from mined patterns (provenance; nothing reads it back).

    ``group1_output_ids``/``group2_output_ids`` are the :class:`Output` ids shown, in setting
    order. With ``selection == "random"`` they were sampled with ``random.Random(seed)`` from the
    outputs of at most ``max_chars`` characters (group 1 first, then group 2). The setting's
    ``provenance`` holds the same record in the study file's form (:mod:`.provenance`), which
    ``export_study`` writes and a copy of the study keeps; this row stays with this database.
    """

    class Selection(models.TextChoices):
        RANDOM = "random", "Random sample from a recorded seed"
        HAND = "hand", "Picked by hand"

    setting = models.OneToOneField(
        "studies.Setting", on_delete=models.CASCADE, related_name="stimulus_source"
    )
    mining_job = models.ForeignKey(MiningJob, on_delete=models.PROTECT, related_name="+")
    target_pattern = models.ForeignKey(MinedPattern, on_delete=models.PROTECT, related_name="+")
    distractor_pattern_ids = models.JSONField(default=list, blank=True)
    selection = models.CharField(max_length=10, choices=Selection.choices)
    seed = models.BigIntegerField(null=True, blank=True)
    max_chars = models.PositiveIntegerField(null=True, blank=True)
    group1_output_ids = models.JSONField(default=list)
    group2_output_ids = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Source of {self.setting}"
