"""Blind annotation of participants' answers.

An :class:`Item` stands for one answered :class:`~spotlight_study.participation.models.TaskResponse`
(training or main) and is known to annotators only by its random ``public_id``. Each item goes to
``study.annotators_per_item`` annotators (k): an :class:`Assignment` reserves a place for one
annotator until ``expires_at`` and becomes ``submitted`` with the first saved label. The current
label of an annotator is an :class:`Annotation` (one per item x annotator); every save is also
kept as an :class:`AnnotationRevision`. A :class:`FinalLabel` is the agreed or adjudicated label
that feeds the export.

Pilot participants' answers (``Participant.is_pilot``, ``manage.py pilot``) become items too, with
``Item.is_pilot`` set: they form the study's *pilot annotation round*, which annotators get only
while the researcher has it open (``AnnotationPool.pilot_round_open``) and which every count,
agreement figure and final-label export keeps apart from the real items.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from spotlight_study.participation.models import TaskResponse
from spotlight_study.stimuli.models import Job
from spotlight_study.studies.models import Setting, Study


def new_public_id() -> str:
    """A random, URL-safe item id (16 characters, 96 bits); carries no information.

    It never begins with ``-``: CSV exports put a ``'`` in front of cells that begin with a
    formula character (:mod:`spotlight_study.csvsafe`), and an id should read the same in a
    spreadsheet, a URL and a label file. (The import also accepts ids with that ``'``.)
    """
    while True:
        candidate = secrets.token_urlsafe(12)
        if not candidate.startswith("-"):
            return candidate


class Exclusion(models.TextChoices):
    """Why an answer must be excluded from the analysis (``none``: it is kept)."""

    NONE = "none", "None: keep the answer"
    FAILED_INSTRUCTION_CHECK = "failed_instruction_check", "Failed instruction check"
    COPY_PASTED = "copy_pasted", "Copy-pasted"
    AI_GENERATED = "ai_generated", "AI-generated"
    DUPLICATE = "duplicate", "Duplicate"
    OTHER = "other", "Other (explain in the note)"


#: The fields of a label, in export order. ``tags`` is a sorted list of canonical tag names.
LABEL_FIELDS = (
    "identified",
    "surface_difference",
    "no_difference",
    "tags",
    "exclusion",
    "exclusion_note",
)
#: The fields compared for agreement; the free-text note is not compared.
COMPARED_FIELDS = ("identified", "surface_difference", "no_difference", "tags", "exclusion")


class LabelFields(models.Model):
    """The label schema shared by annotations, their revisions and final labels.

    Booleans: ``identified`` (the setting's target difference), ``surface_difference`` (the
    obvious surface difference was named, e.g. Smith vs Li), ``no_difference`` (the participant
    claims there is none). ``tags``: other differences reported, from the setting's codebook.
    ``exclusion`` with ``exclusion_note`` (required for ``other``).
    """

    identified = models.BooleanField()
    surface_difference = models.BooleanField()
    no_difference = models.BooleanField()
    tags = models.JSONField(default=list, blank=True)
    exclusion = models.CharField(max_length=30, choices=Exclusion.choices, default=Exclusion.NONE)
    exclusion_note = models.TextField(blank=True, max_length=1000)
    # A declared codebook's values (studies/codebook.py), ``{field key: value}``: the compared
    # fields in ``values``, the free-text ``note`` fields in ``notes``. Both stay {} under the
    # default codebook, whose values are the columns above.
    values = models.JSONField(default=dict, blank=True)
    notes = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True

    def clean(self) -> None:
        """Raise ``ValidationError`` if ``other`` has no note or ``tags`` is not a list of text."""
        if self.exclusion == Exclusion.OTHER and not self.exclusion_note.strip():
            raise ValidationError({"exclusion_note": "Explain the exclusion 'other' in the note."})
        if not isinstance(self.tags, list) or not all(isinstance(t, str) for t in self.tags):
            raise ValidationError({"tags": "Tags must be a list of text."})
        if not isinstance(self.values, dict) or not isinstance(self.notes, dict):
            raise ValidationError({"values": "Codebook values must be a mapping."})

    def label_dict(self) -> dict:
        """The label as ``{field: value}`` over :data:`LABEL_FIELDS`, plus ``values`` and
        ``notes`` when a declared codebook filled them."""
        out = {f: (list(self.tags) if f == "tags" else getattr(self, f)) for f in LABEL_FIELDS}
        if self.values or self.notes:
            out.update(values=dict(self.values), notes=dict(self.notes))
        return out


class AnnotationPool(models.Model):
    """One row per study whose row lock serializes the handing out of items.

    Kept apart from the study row so that annotators never wait for participants' arrivals,
    which lock the study row.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="annotation_pool")
    created_at = models.DateTimeField(auto_now_add=True)
    #: Whether annotators are given the pilot items (the pilot annotation round); set by
    #: ``manage.py pilot_annotation`` or the overview's button, never by the pilot itself.
    pilot_round_open = models.BooleanField(default=False)
    #: When the pilot round was last opened or closed (``None``: never).
    pilot_round_changed_at = models.DateTimeField(null=True, blank=True)


class Item(models.Model):
    """One answer to be labeled. ``public_id`` is the only handle annotators ever see.

    ``answer_digest`` is the SHA-256 of the whitespace-normalized, lower-cased answer; items of the
    same kind (training or main) with the same digest get the neutral identical-answer flag.

    ``is_pilot`` mirrors the participant's ``is_pilot`` when the item is made: a pilot item
    belongs to the pilot annotation round and never to the real queues, agreement or final labels.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="annotation_items")
    response = models.OneToOneField(
        TaskResponse, on_delete=models.CASCADE, related_name="annotation_item"
    )
    setting = models.ForeignKey(Setting, on_delete=models.PROTECT, related_name="annotation_items")
    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    answer_digest = models.CharField(max_length=64)
    is_pilot = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["study", "is_pilot"]),
            models.Index(fields=["study", "setting"]),
            models.Index(fields=["study", "answer_digest"]),
        ]

    def __str__(self) -> str:
        return f"item {self.public_id}"


class StudyAnnotator(models.Model):
    """An annotator's seat in one study: stable pseudonym number and the seed of their order.

    ``order_seed`` fixes the annotator's own random order of the items (see
    :func:`spotlight_study.annotation.selectors.queue_order_key`).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="annotators")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_seats"
    )
    number = models.PositiveIntegerField()
    order_seed = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="annotator_once_per_study"),
            models.UniqueConstraint(fields=["study", "number"], name="annotator_number_per_study"),
        ]

    def __str__(self) -> str:
        return self.pseudonym

    @property
    def pseudonym(self) -> str:
        """``annotator_<n>``, numbered in order of first assignment in the study."""
        return f"annotator_{self.number}"


class Assignment(models.Model):
    """A place of one annotator on one item: reserved until ``expires_at``, submitted, or released.

    An item's places in use are its submitted assignments plus its unexpired reservations; there
    are never more than ``study.annotators_per_item`` of them (checked under the pool lock), and
    never two rows for one annotator and item (unique constraint), so nobody labels an item
    twice. A reservation that expired is ``released``: its place is free again (the same
    annotator may get it back later, on the same row). A ``skipped`` reservation frees its place
    too, and comes back to the annotator only after every other item open to them.
    """

    class State(models.TextChoices):
        RESERVED = "reserved", "Reserved"
        SUBMITTED = "submitted", "Submitted"
        RELEASED = "released", "Released after the timeout"
        SKIPPED = "skipped", "Skipped by the annotator"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_assignments"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.RESERVED)
    reserved_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="assignment_once_per_annotator"
            ),
        ]
        indexes = [
            models.Index(fields=["item", "state"]),
            models.Index(fields=["annotator", "state"]),
        ]


class Annotation(LabelFields):
    """An annotator's current label of an item; the last save wins (``revision`` counts saves)."""

    class Source(models.TextChoices):
        WEB = "web", "Web page"
        API = "api", "JSON API"
        IMPORT = "import", "CSV import"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    revision = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WEB)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="one_annotation_per_item_annotator"
            ),
        ]


class AnnotationRevision(LabelFields):
    """One save of an :class:`Annotation`, kept for the history (never changed)."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    source = models.CharField(max_length=10, choices=Annotation.Source.choices)
    saved_at = models.DateTimeField()

    class Meta:
        ordering = ["annotation", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "revision"], name="one_revision_number"),
        ]


class FinalLabel(LabelFields):
    """The label of an item used in the analysis: agreed by all its annotators, adjudicated, or
    the machine coder's label accepted by the researcher for some label fields.

    Human final labels (``agreement``, ``adjudication``) hold every field. A ``machine`` final
    label holds only the fields in ``machine_fields`` (taken from the :class:`MachineLabel` of
    ``machine_model``, see :class:`MachineAcceptance`); the other compared fields are ``None``
    (no final value). A database constraint keeps human final labels complete.
    """

    class Source(models.TextChoices):
        AGREEMENT = "agreement", "Full agreement"
        ADJUDICATION = "adjudication", "Adjudication"
        MACHINE = "machine", "Machine coder (accepted by the researcher)"

    #: Sources set by people; a machine label never overwrites these.
    HUMAN_SOURCES = (Source.AGREEMENT, Source.ADJUDICATION)

    # Nullable here only, for the fields a machine final label leaves without a value.
    identified = models.BooleanField(null=True, blank=True)
    surface_difference = models.BooleanField(null=True, blank=True)
    no_difference = models.BooleanField(null=True, blank=True)
    tags = models.JSONField(default=list, blank=True, null=True)
    exclusion = models.CharField(
        max_length=30, choices=Exclusion.choices, default=Exclusion.NONE, null=True, blank=True
    )

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="final_label")
    source = models.CharField(max_length=15, choices=Source.choices)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="adjudications",
    )
    machine_model = models.CharField(max_length=200, blank=True)
    machine_fields = models.JSONField(default=list, blank=True)
    decided_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(source="machine")
                | models.Q(
                    identified__isnull=False,
                    surface_difference__isnull=False,
                    no_difference__isnull=False,
                    tags__isnull=False,
                    exclusion__isnull=False,
                ),
                name="human_final_label_complete",
            ),
        ]

    def clean(self) -> None:
        """As :meth:`LabelFields.clean`; a machine final label may leave fields ``None``."""
        if self.source == self.Source.MACHINE:
            if self.tags is not None and (
                not isinstance(self.tags, list) or not all(isinstance(t, str) for t in self.tags)
            ):
                raise ValidationError({"tags": "Tags must be a list of text."})
            return
        super().clean()

    @property
    def is_human(self) -> bool:
        """Whether people set this final label (agreement or adjudication)."""
        return self.source in self.HUMAN_SOURCES


class LabelsVersion(models.Model):
    """A counter of the changes to a study's items, annotations and final labels, kept by the
    database itself (triggers of migration ``0010_labels_version``), for the pages that cache
    what they compute from every label (the researcher's overview).

    Every insert, update or delete of an ``annotation_item``, ``annotation_annotation`` or
    ``annotation_finallabel`` row raises ``version`` of its study in the same transaction, by
    whatever path it came (a save, ``QuerySet.update()``, ``bulk_create``, the admin, raw SQL),
    so equal (``token``, ``version``) means equal labels: a cheaper test than a digest of every
    label (about 0.5 s at 120,000 labels). ``token`` is random, drawn when the row is made: a
    row made again (a test rolled back, whose SQLite database gives the next study the same
    number) has a new token, so a version number seen before never names other labels (a backup restored under running servers would need
    them restarted, as after any restore). A study without a row has had no change since the
    triggers were installed. ``study_id`` is a plain number, not a foreign key: a study's
    deletion removes its labels, which fire the triggers, and a row made then must not hold up
    the deletion.
    """

    study_id = models.BigIntegerField(primary_key=True)
    token = models.CharField(max_length=32)
    version = models.BigIntegerField()

    class Meta:
        # Written by triggers; Django only reads it.
        default_permissions = ("view",)


class OverviewSnapshot(models.Model):
    """What the researcher's overview computed from every label of a study's round (real items,
    or the pilot round's), as JSON, under ``key``: the digest of everything it was computed from
    (the :class:`LabelsVersion` among them). Read by every process, so that a worker that
    starts (a deploy, a recycled worker, another server) shows the overview without computing
    the agreement again (seconds at 100,000 labels). One row per study and round, replaced when
    its key changes; a row under another key is never read.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    is_pilot = models.BooleanField()
    key = models.CharField(max_length=64)
    summary = models.JSONField()
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "is_pilot"], name="one_overview_snapshot_per_round"),
        ]


class CodebookTag(models.Model):
    """A tag added to a setting's codebook by an annotator (or a label import).

    The study file's tags live in ``Setting.annotation_tags``; the codebook is the union.
    ``name`` is canonical (:func:`spotlight_study.studies.schema.normalize_tag`).
    """

    setting = models.ForeignKey(Setting, on_delete=models.CASCADE, related_name="codebook_tags")
    name = models.CharField(max_length=60)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["setting", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["setting", "name"], name="codebook_tag_once_per_setting"
            ),
        ]

    def __str__(self) -> str:
        return self.name


# --- the machine coder ---------------------------------------------------------------------
# Kept apart from Annotation on purpose: a machine label is never an annotator's label, so it
# can never count toward k, reach adjudication or become a final label by agreement.


class MachineCodingJob(Job):
    """Label every saved answer of a study with an LLM through an OpenAI-compatible API.

    ``model`` is the model asked for; ``fields`` the compared label fields requested (a subset
    of :data:`COMPARED_FIELDS`, in that order). ``base_url`` records the server (never the API
    key). ``done``/``total`` count items with a stored :class:`MachineLabel` (labelled or
    missing) out of the study's items when the run started.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="machine_coding_jobs")
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    fields = models.JSONField(default=list)

    class Meta(Job.Meta):
        constraints = list(Job.Meta.constraints)

    def __str__(self) -> str:
        return f"Machine coding of {self.study} with {self.model}"

    @property
    def coder_name(self) -> str:
        """``llm:<model>``, the machine annotator's name in exports and on the overview."""
        return f"llm:{self.model}"


class MachineLabel(models.Model):
    """The machine coder's label of one item, or a missing label with the reason.

    One row per (item, model asked for): a rerun or a second job with the same model skips
    items that have one, so nothing is ever labelled twice. Label fields not requested, or
    all of them when ``status`` is ``missing``, are ``None``; under a study's declared codebook
    the values are in ``values`` and the default codebook's columns stay ``None``. ``response_model``,
    ``system_fingerprint`` and ``finish_reason`` are as the server returned them for the last
    attempt; the token counts add up every attempt (``attempts`` is 1 or 2).
    """

    class Status(models.TextChoices):
        LABELLED = "labelled", "Labelled"
        MISSING = "missing", "Missing (invalid reply or refused request)"

    job = models.ForeignKey(MachineCodingJob, on_delete=models.CASCADE, related_name="labels")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="machine_labels")
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices)
    missing_reason = models.TextField(blank=True)
    identified = models.BooleanField(null=True)
    surface_difference = models.BooleanField(null=True)
    no_difference = models.BooleanField(null=True)
    tags = models.JSONField(null=True, blank=True)
    exclusion = models.CharField(max_length=30, choices=Exclusion.choices, null=True, blank=True)
    # Under a declared codebook: its compared fields' values by key, as an annotation's
    # ``values`` (None when missing, and under the default codebook, whose values are the
    # columns above).
    values = models.JSONField(null=True, blank=True)
    response_model = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "model"], name="machine_label_once_per_model"),
        ]
        indexes = [models.Index(fields=["model", "status"])]


class MachineAcceptance(models.Model):
    """One entry of the audit log of the researcher accepting (or revoking) the machine coder's
    labels as final labels for one label field.

    Written by :mod:`spotlight_study.annotation.services.machine_acceptance`: who (``user``, and
    ``actor``, the username or how the command line was run), when (``at``), the ``action``,
    the ``model`` (as asked for, without ``llm:``), the compared label ``field`` and how many
    ``items`` it changed. Rows are never changed or deleted; a field's current acceptance is its
    latest entry (``accept``), none after a ``revoke``.
    """

    class Action(models.TextChoices):
        ACCEPT = "accept", "Accepted"
        REVOKE = "revoke", "Revoked"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="machine_acceptances")
    model = models.CharField(max_length=200)
    field = models.CharField(max_length=30)
    action = models.CharField(max_length=10, choices=Action.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor = models.CharField(max_length=200)
    at = models.DateTimeField()
    items = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "at", "pk"]
        indexes = [models.Index(fields=["study", "field", "at"])]

    def __str__(self) -> str:
        return f"{self.action} llm:{self.model} for {self.field} in {self.study} at {self.at}"
