"""Study definition models.

A study has one training setting and N main settings. Each setting shows two groups of texts side
by side (Group 1 | Group 2) and, depending on the participant's condition, a token-pattern box.
"""
import secrets

from django.core.exceptions import ValidationError
from django.db import models

from .languages import DEFAULT_LANGUAGE, DEFAULT_TASK_PROMPT, pattern_label
from .quality_flags import default_holding_flags, known_flag_keys
from .rules import abandonment_timeout_too_short, completion_code_clashes


def _new_salt() -> str:
    return secrets.token_hex(16)


def new_definition_version() -> int:
    """A fresh definition version: a random 62-bit number, drawn again on every edit.

    Random rather than counted, so that no two states of any study share a version: not two
    concurrent edits of one row, and not two studies that reuse a row id (SQLite reuses ids
    after a rollback), which a per-process plan cache keyed by (id, version) relies on.
    """
    return secrets.randbits(62)


class Condition(models.TextChoices):
    """What a participant sees in a main setting."""

    NO_PATTERN = "no_pattern", "No token pattern"
    PATTERN = "pattern", "Token pattern"
    PATTERN_WITH_DISTRACTORS = "pattern_with_distractors", "Token pattern with distractors"


class Study(models.Model):
    """A study as launched on Prolific.

    Times are in minutes. ``survey`` is the survey definition validated by
    :func:`spotlight_study.studies.schema.validate_study_data` (see ``fixtures/`` for an example).
    ``pseudonym_salt`` is secret: it turns Prolific IDs into export pseudonyms.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class FailedCheckPolicy(models.TextChoices):
        CONTINUE_AND_FLAG = "continue_and_flag", "Continue and flag"
        END = "end", "End with the failed-check completion code"

    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    # The participant pages' language (spotlight_study/studies/languages.py).
    language = models.CharField(
        max_length=12,
        default=DEFAULT_LANGUAGE,
        help_text="Language code of the participant pages, e.g. en, de, es, fr.",
    )

    consent_text = models.TextField()
    instructions_text = models.TextField(help_text="Step 1: what the task is.")
    example_answer = models.TextField(help_text="Example answer for the worked example.")
    pattern_intro_text = models.TextField(help_text="Step 2: what the token-pattern box is.")
    task_prompt = models.TextField(default=DEFAULT_TASK_PROMPT)

    completion_code = models.CharField(max_length=40)
    failed_check_code = models.CharField(max_length=40)
    no_consent_code = models.CharField(max_length=40)

    estimated_minutes = models.PositiveIntegerField(default=15)
    maximum_minutes = models.PositiveIntegerField(default=45)
    abandonment_timeout_minutes = models.PositiveIntegerField(
        default=45,
        help_text="An in-progress participant older than this no longer holds a place in a cell.",
    )
    target_sample_size = models.PositiveIntegerField(default=48)
    stop_at_target = models.BooleanField(
        default=False,
        help_text="Turn away new arrivals once the places held reach the target sample size.",
    )
    min_answer_chars = models.PositiveIntegerField(default=1)
    max_answer_chars = models.PositiveIntegerField(default=5000)
    short_time_flag_seconds = models.PositiveIntegerField(
        default=20, help_text="Answers submitted faster than this are flagged."
    )
    failed_check_policy = models.CharField(
        max_length=20,
        choices=FailedCheckPolicy.choices,
        default=FailedCheckPolicy.CONTINUE_AND_FLAG,
    )
    instruction_check_attempts = models.PositiveSmallIntegerField(
        default=1,
        choices=[(1, "One attempt"), (2, "Two attempts: re-read the instructions after a failure")],
        help_text="With 2, a failed first instruction check shows the instructions again, then "
        "the training task once more; the last attempt counts.",
    )
    holding_flags = models.JSONField(
        default=default_holding_flags,
        blank=True,
        help_text="Quality flags that hold a submission back from bulk approval for a manual look.",
    )
    # The thresholds of the writing-process flags (participation/flags.py, FlagThresholds):
    # ``{name: number}``, only the ones the study file sets; the others take their defaults.
    answer_flag_thresholds = models.JSONField(default=dict, blank=True)
    conditions = models.JSONField(
        default=list, help_text='Condition values, e.g. ["no_pattern", "pattern"].'
    )
    survey = models.JSONField(default=dict)
    # The study file's ``pages:`` (studies/pages.py): ``[{kind, at, ...}]``, at most one per place.
    pages = models.JSONField(default=list, blank=True)
    annotators_per_item = models.PositiveSmallIntegerField(
        default=2, help_text="Blind annotation: how many annotators label each answer (k)."
    )
    annotation_reservation_minutes = models.PositiveIntegerField(
        default=30,
        help_text="Blind annotation: an item opened by an annotator is released after this long.",
    )
    # The study file's annotation.codebook in stored form (studies/codebook.py); {}: the
    # default codebook, today's fixed label schema.
    annotation_codebook = models.JSONField(default=dict, blank=True)
    pseudonym_salt = models.CharField(max_length=64, default=_new_salt, editable=False)
    # Changes whenever the study, one of its settings or patterns is saved or deleted
    # (studies.plan); the compiled plan of the participant pages is kept until it does.
    definition_version = models.BigIntegerField(default=new_definition_version, editable=False)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"
        constraints = [
            # The messages are for code paths that skip clean(); clean() ties the same rules to
            # their fields, and full_clean() then skips the constraint for a field in error.
            models.CheckConstraint(
                condition=models.Q(maximum_minutes__gte=models.F("estimated_minutes")),
                name="study_max_minutes_gte_estimate",
                violation_error_message="Maximum minutes must be at least the estimated minutes.",
            ),
            models.CheckConstraint(
                condition=models.Q(annotators_per_item__gte=1),
                name="study_annotators_per_item_gte_1",
                violation_error_message="Annotators per item must be at least 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.slug})"

    def clean(self) -> None:
        """Check the rules across fields, as the study-file validation does.

        The condition list, maximum minutes at least the estimate, annotators per item at least
        1, the abandonment timeout at least maximum minutes and distinct completion codes
        (:mod:`spotlight_study.studies.rules`). Raises ``ValidationError`` with every broken
        rule tied to its field, so the admin shows each next to its input.
        """
        errors: dict[str, str] = {}
        known = known_flag_keys()
        unknown = [f for f in self.holding_flags or [] if f not in known]
        if not isinstance(self.holding_flags, list) or (known and unknown):
            errors["holding_flags"] = f"A list of flag keys: {', '.join(known)}."
        valid = set(Condition.values)
        bad = [c for c in self.conditions or [] if c not in valid]
        if not self.conditions:
            errors["conditions"] = "At least one condition is required."
        elif bad:
            errors["conditions"] = f"Unknown condition(s): {', '.join(map(str, bad))}."
        elif len(set(self.conditions)) != len(self.conditions):
            errors["conditions"] = "Conditions must not repeat."
        # Values may be None here when their own field failed validation.
        if self.maximum_minutes is not None and self.estimated_minutes is not None:
            if self.maximum_minutes < self.estimated_minutes:
                errors["maximum_minutes"] = (
                    f"Must be at least the estimated minutes ({self.estimated_minutes})."
                )
        if self.annotators_per_item is not None and self.annotators_per_item < 1:
            errors["annotators_per_item"] = "At least 1 annotator must label each answer."
        if self.abandonment_timeout_minutes is not None and self.maximum_minutes is not None:
            if abandonment_timeout_too_short(
                timeout_minutes=self.abandonment_timeout_minutes,
                maximum_minutes=self.maximum_minutes,
            ):
                errors["abandonment_timeout_minutes"] = (
                    f"Must be at least the maximum minutes ({self.maximum_minutes}): a participant "
                    "still within Prolific's time limit would otherwise lose their place."
                )
        labels = {
            "completion_code": "the completion code",
            "failed_check_code": "the failed-check code",
            "no_consent_code": "the no-consent code",
        }
        clashes = completion_code_clashes({name: getattr(self, name) for name in labels})
        for name, earlier in clashes.items():
            errors[name] = (
                f"Must differ from {labels[earlier]}: Prolific tells outcomes apart only by "
                "their completion code."
            )
        if errors:
            raise ValidationError(errors)


class Setting(models.Model):
    """One pair of text groups. ``group1_texts`` and ``group2_texts`` are lists of strings."""

    class Kind(models.TextChoices):
        TRAINING = "training", "Training"
        MAIN = "main", "Main"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="settings")
    key = models.SlugField(max_length=50)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.MAIN)
    position = models.PositiveIntegerField(default=0, help_text="Order in the study definition.")
    title = models.CharField(max_length=200)
    group1_texts = models.JSONField(default=list)
    group2_texts = models.JSONField(default=list)
    target_description = models.TextField(
        blank=True, help_text="The systematic difference, for annotators."
    )
    check_keywords = models.JSONField(
        default=list,
        blank=True,
        help_text="Training only: the instruction check passes if the answer contains any of these.",
    )
    annotation_tags = models.JSONField(
        default=list,
        blank=True,
        help_text="Blind annotation: the codebook of other differences (tags), e.g. "
        '["profession", "hard work"]; annotators may add more.',
    )
    surface_difference = models.TextField(
        blank=True,
        help_text="Blind annotation: the obvious surface difference, e.g. the name Smith vs Li.",
    )
    # How the texts and patterns were obtained, in the study file's ``provenance`` form
    # (schema.ProvenanceSerializer): written when a setting is built on the Stimuli pages and by
    # import_study, read by export_study. None for a setting written by hand.
    provenance = models.JSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="Settings built from mined patterns: stimulus set, mining job, patterns, sample.",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "kind", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="setting_unique_key_per_study"),
            models.UniqueConstraint(
                fields=["study"],
                condition=models.Q(kind="training"),
                name="setting_one_training_per_study",
                violation_error_message="A study has only one training setting.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.key}"


class TokenPattern(models.Model):
    """A token pattern shown in a setting's box, e.g. ``her (more often in group 2)``.

    ``tokens`` is a list of strings; ``group`` is 1 or 2, the group where the pattern is more
    frequent. Distractor patterns are shown only in the ``pattern_with_distractors`` condition.
    ``unchecked_reason`` marks a pattern exempt from :mod:`spotlight_study.studies.content`.
    """

    setting = models.ForeignKey(Setting, on_delete=models.CASCADE, related_name="patterns")
    tokens = models.JSONField()
    group = models.PositiveSmallIntegerField(choices=[(1, "Group 1"), (2, "Group 2")])
    is_distractor = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)
    unchecked_reason = models.TextField(
        blank=True,
        help_text="If set, the pattern is deliberately exempt from the content checks (its tokens "
        "occur in the texts, its group claim holds), for this reason.",
    )

    class Meta:
        ordering = ["setting", "position"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(group__in=[1, 2]),
                name="pattern_group_1_or_2",
                violation_error_message="Group must be 1 or 2.",
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """The text shown in the box, e.g. ``maize, beans (more often in group 1)``, in the
        active language (:func:`.languages.pattern_label`)."""
        return pattern_label(self.tokens, self.group)


class StudyMember(models.Model):
    """One role of one user on one study (issue 40): ``owner``, ``researcher``, ``adjudicator``,
    ``annotator`` or ``viewer`` (``accounts.roles.STUDY_ROLES``).

    A user may hold several roles on a study (an annotator who also adjudicates), one row each;
    the services (``studies/members.py``) refuse an annotator role next to a role that sees
    conditions, and refuse instance staff as annotators, so annotation stays blind.
    """

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        RESEARCHER = "researcher", "Researcher"
        ADJUDICATOR = "adjudicator", "Adjudicator"
        ANNOTATOR = "annotator", "Annotator"
        VIEWER = "viewer", "Viewer"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        "auth.User", on_delete=models.CASCADE, related_name="study_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user", "role"], name="study_member_once"),
        ]
        indexes = [models.Index(fields=["user", "study"], name="study_member_user")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on {self.study_id}"


class StudyDraft(models.Model):
    """A study file being edited in the browser's study builder (``/researcher/new/``,
    ``/researcher/<slug>/edit/``).

    ``data`` is the study file as a mapping, exactly what ``import_study`` reads; it may be
    incomplete or invalid while it is a draft. Publishing runs it through the import service.
    ``version`` counts saves (1 for a new draft): a save names the version it was loaded at and
    is refused if another save came first, so two tabs never overwrite each other silently.
    """

    slug = models.SlugField(max_length=80, unique=True)
    data = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft {self.slug} v{self.version}"
