"""The platform's record of its Prolific side.

- :class:`ProlificStudy` links a study to its study on Prolific and holds what was sent there
  (reward in minor currency units, places, completion-code actions, filters).
- :class:`Submission` mirrors each Prolific submission's status (pulled by the sync, pushed by
  the webhook). Its ``id`` on Prolific is the ``SESSION_ID`` a participant arrived with.
- :class:`WebhookEvent` records every webhook delivery once (unique ``X-Event-ID``).
- :class:`ScreenOut` is one paid screen-out, recorded before it is sent.
- :class:`Message` is one message sent through Prolific (recipients by pseudonym).
- :class:`Demographics` is one submission's row of the demographic export, by pseudonym.
- :class:`BonusPayment` is one bulk bonus: drafted (dry run), set up on Prolific, then paid.
  ``pay_sent_at`` is written and committed *before* the pay request goes out, so a crash or an
  error can never lead to paying twice.
"""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from spotlight_study.participation.models import Participant
from spotlight_study.studies.models import Study

from .payloads import REJECTION_CATEGORIES, REJECTION_MESSAGE_MIN_CHARS, SCREEN_OUT_MIN_MINOR_UNITS
from .statuses import STATUS_RANK  # noqa: F401  (re-exported; the order lives in statuses.py)


class ProlificStudy(models.Model):
    """A study's counterpart on Prolific.

    ``prolific_id`` is empty until the draft is created (or the study is linked to one made in
    Prolific's app). ``reward_minor_units`` is per participant in minor units (pence/cents).
    ``failed_check_review`` says what review does with a submission whose participant failed
    the instruction check: ask for a return (default, Prolific's policy for failed checks),
    reject with ``rejection_category`` and ``rejection_message`` (at least 100 characters), or
    leave it for manual review.
    """

    class CompletedAction(models.TextChoices):
        MANUALLY_REVIEW = "MANUALLY_REVIEW", "Review, then approve in bulk"
        AUTOMATICALLY_APPROVE = "AUTOMATICALLY_APPROVE", "Approve automatically"

    class FailedCheckReview(models.TextChoices):
        REQUEST_RETURN = "request_return", "Ask the participant to return the submission"
        REJECT = "reject", "Reject with a category and a message"
        MANUAL = "manual", "Leave for manual review"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    prolific_id = models.CharField(max_length=24, blank=True, db_index=True)
    prolific_status = models.CharField(max_length=30, blank=True)
    prolific_status_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When Prolific's study status was last observed (webhook study.status.change).",
    )
    description = models.TextField(blank=True, help_text="Shown to participants on Prolific.")
    reward_minor_units = models.PositiveIntegerField(
        default=0, help_text="Reward per participant in minor currency units (pence, cents)."
    )
    total_available_places = models.PositiveIntegerField(default=0)
    device_compatibility = models.JSONField(default=list, blank=True)
    filters = models.JSONField(default=list, blank=True, help_text="Prolific filters, as sent.")
    participant_group_id = models.CharField(
        max_length=24,
        blank=True,
        help_text="Participants who saw the task join this group; the study blocks the group.",
    )
    completed_action = models.CharField(
        max_length=30, choices=CompletedAction.choices, default=CompletedAction.MANUALLY_REVIEW
    )
    failed_check_review = models.CharField(
        max_length=20, choices=FailedCheckReview.choices, default=FailedCheckReview.REQUEST_RETURN
    )
    rejection_category = models.CharField(
        max_length=30, blank=True, choices=[(c, c) for c in REJECTION_CATEGORIES]
    )
    rejection_message = models.TextField(blank=True)
    screen_out_reward_minor_units = models.PositiveIntegerField(
        default=0,
        help_text="Paid screen-out for failed instruction checks under the study's 'end' policy, "
        "in minor units (0: no screen-outs). At least 10 and below the reward.",
    )
    external_study_url = models.URLField(max_length=500, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    unknown_statuses = models.JSONField(
        default=dict,
        blank=True,
        help_text="Submission statuses from Prolific that this platform does not know: "
        "{status as received: ISO time last seen}. Those submissions were left unchanged.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "Prolific study"
        verbose_name_plural = "Prolific studies"
        constraints = [
            models.UniqueConstraint(
                fields=["prolific_id"],
                condition=~models.Q(prolific_id=""),
                name="prolific_study_unique_prolific_id",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} on Prolific ({self.prolific_id or 'not created'})"

    @property
    def screens_out(self) -> bool:
        """Whether failed instruction checks end with Prolific's paid screen-out: a screen-out
        reward is set and the study ends the session on a failed check (``end`` policy)."""
        return bool(self.screen_out_reward_minor_units) and (
            self.study.failed_check_policy == Study.FailedCheckPolicy.END
        )

    def clean(self) -> None:
        """A rejecting review needs a category and a message of at least 100 characters; a
        screen-out reward is at least Prolific's minimum and below the study's reward."""
        errors = {}
        if self.screen_out_reward_minor_units and not (
            SCREEN_OUT_MIN_MINOR_UNITS <= self.screen_out_reward_minor_units < self.reward_minor_units
        ):
            errors["screen_out_reward_minor_units"] = (
                f"A screen-out pays at least {SCREEN_OUT_MIN_MINOR_UNITS} minor units and less than "
                "the reward (Prolific's rule)."
            )
        if self.failed_check_review == self.FailedCheckReview.REJECT:
            if self.rejection_category not in REJECTION_CATEGORIES:
                errors["rejection_category"] = "Choose Prolific's rejection category."
            if len(self.rejection_message.strip()) < REJECTION_MESSAGE_MIN_CHARS:
                errors["rejection_message"] = (
                    f"Prolific requires at least {REJECTION_MESSAGE_MIN_CHARS} characters."
                )
        if errors:
            raise ValidationError(errors)


class Submission(models.Model):
    """The latest known status of one Prolific submission.

    ``submission_id`` is Prolific's id (the ``SESSION_ID`` of the study URL);
    ``prolific_pid`` the participant's Prolific ID (never shown or exported; pages use the
    pseudonym). ``status_at`` is when the status was observed (webhook timestamp or sync
    time): between two final statuses the later one wins; a lower-ranked status never replaces
    a higher one (:data:`STATUS_RANK`). ``review_action`` records what review did.
    """

    class ReviewAction(models.TextChoices):
        NONE = "", "None"
        APPROVED = "approved", "Approved"
        RETURN_REQUESTED = "return_requested", "Return requested"
        REJECTED = "rejected", "Rejected"

    prolific_study = models.ForeignKey(
        ProlificStudy, on_delete=models.CASCADE, related_name="submissions"
    )
    submission_id = models.CharField(max_length=64, unique=True)
    prolific_pid = models.CharField(max_length=64, blank=True, db_index=True)
    participant = models.ForeignKey(
        Participant,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="prolific_submissions",
    )
    status = models.CharField(max_length=30)
    status_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    study_code = models.CharField(max_length=40, blank=True)
    entry_verified = models.BooleanField(
        null=True, blank=True, help_text="Prolific confirmed the PID and study of this session."
    )
    review_action = models.CharField(
        max_length=20, choices=ReviewAction.choices, blank=True, default=ReviewAction.NONE
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["prolific_study", "created_at", "pk"]
        indexes = [models.Index(fields=["prolific_study", "status"])]

    def __str__(self) -> str:
        return f"submission {self.submission_id} ({self.status})"


class WebhookEvent(models.Model):
    """One webhook delivery, stored once per ``X-Event-ID`` and scope (a redelivery is a duplicate).

    ``sent_at`` is the event's timestamp (``X-Timestamp`` or the signed request timestamp);
    ``outcome`` what applying it did (``applied``, ``stale``, ``unmatched``, ``ignored``).
    ``scope_study`` is the study whose own webhook URL (``/prolific/webhook/<slug>/``) received
    it, verified with that study's secret, and the only study it may change; empty for the
    instance's URL (``PROLIFIC_WEBHOOK_SECRET``), which changes only studies without a webhook
    secret of their own. Event ids are unique per scope, so an event signed with one study's
    secret cannot take the id of another study's event and have it dropped as a duplicate.
    """

    event_id = models.CharField(max_length=100)
    scope_study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="+",
        help_text="The study whose webhook URL and secret received the event; empty: the instance's.",
    )
    event_type = models.CharField(max_length=60)
    resource_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=30, blank=True)
    sent_at = models.DateTimeField()
    payload = models.JSONField(default=dict)
    outcome = models.CharField(max_length=20, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["event_id"], condition=models.Q(scope_study__isnull=True),
                name="prolific_webhook_event_once_instance",
            ),
            models.UniqueConstraint(
                fields=["scope_study", "event_id"], condition=models.Q(scope_study__isnull=False),
                name="prolific_webhook_event_once_per_study",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} ({self.outcome})"


class BonusPayment(models.Model):
    """One bulk bonus payment of a study.

    ``items`` is ``[{"recipient": id, "participant": pseudonym, "amount_minor": int}]``; the
    recipient is the submission id (or the PID when no submission is known).
    ``total_minor_units`` is their sum in minor units. ``csv_bonuses`` is exactly what set-up
    sent (amounts in major units). The life cycle is draft (dry run, nothing sent) -> set up on
    Prolific (``bulk_id``) -> pay sent (``pay_sent_at``, written before the request) -> paid or
    pay failed. A payment whose pay was sent is never sent again.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Dry run (nothing sent)"
        SET_UP = "set_up", "Set up on Prolific, not paid"
        PAY_SENT = "pay_sent", "Pay sent, answer pending"
        PAID = "paid", "Paid"
        PAY_FAILED = "pay_failed", "Pay request failed: check Prolific before doing anything"

    prolific_study = models.ForeignKey(
        ProlificStudy, on_delete=models.CASCADE, related_name="bonus_payments"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    items = models.JSONField(default=list)
    csv_bonuses = models.TextField(blank=True)
    total_minor_units = models.PositiveIntegerField(default=0)
    bulk_id = models.CharField(max_length=64, blank=True)
    setup_response = models.JSONField(default=dict, blank=True)
    pay_sent_at = models.DateTimeField(null=True, blank=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status__in=["pay_sent", "paid", "pay_failed"])
                | models.Q(pay_sent_at__isnull=False),
                name="bonus_payment_pay_sent_marked",
            ),
        ]

    def __str__(self) -> str:
        return f"bonus {self.pk} of {self.prolific_study.study.slug} ({self.status})"

    @property
    def total_major(self) -> str:
        """The total in major units, e.g. ``"12.50"``."""
        return f"{Decimal(self.total_minor_units) / 100:.2f}"


class Demographics(models.Model):
    """One submission's row of Prolific's demographic export, held for the paper's sample.

    Stored by submission (``submission_id``) and joined to the participant by ``pseudonym``
    only (:func:`~spotlight_study.participation.selectors.participant_pseudonym` of the PID):
    the Prolific ID itself is never stored here. Only rows whose pseudonym belongs to a
    participant of the study are kept. ``age`` is in years; the text fields are as Prolific wrote
    them, ``""`` when missing (expired or withdrawn answers); ``extra`` holds any other column
    Prolific returned (requested screeners), keyed by normalised header.
    """

    prolific_study = models.ForeignKey(
        ProlificStudy, on_delete=models.CASCADE, related_name="demographics"
    )
    submission_id = models.CharField(max_length=64)
    pseudonym = models.CharField(max_length=20, db_index=True)
    age = models.PositiveSmallIntegerField(null=True, blank=True)
    sex = models.CharField(max_length=60, blank=True)
    country_of_residence = models.CharField(max_length=100, blank=True)
    first_language = models.CharField(max_length=100, blank=True)
    nationality = models.CharField(max_length=100, blank=True)
    country_of_birth = models.CharField(max_length=100, blank=True)
    ethnicity = models.CharField(max_length=100, blank=True)
    student_status = models.CharField(max_length=100, blank=True)
    employment_status = models.CharField(max_length=100, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    fetched_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "demographics"
        ordering = ["prolific_study", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["prolific_study", "submission_id"], name="demographics_unique_submission"
            ),
        ]

    def __str__(self) -> str:
        return f"demographics of {self.pseudonym}"


class ScreenOut(models.Model):
    """One paid screen-out sent to Prolific (``POST /studies/{id}/screen-out-submissions/``).

    Written and committed with ``sent_at`` *before* the request goes out, like a bonus payment:
    a screen-out pays the participant, so it is never sent twice. ``amount_minor_units`` is the
    study's screen-out reward at the time; ``outcome`` is ``sent`` (answer pending), ``done`` or
    ``failed`` (with ``error``; check Prolific before doing anything).
    """

    class Outcome(models.TextChoices):
        SENT = "sent", "Sent, answer pending"
        DONE = "done", "Screened out"
        FAILED = "failed", "Request failed: check Prolific"

    prolific_study = models.ForeignKey(
        ProlificStudy, on_delete=models.CASCADE, related_name="screen_outs"
    )
    submission_id = models.CharField(max_length=64, unique=True)
    participant = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    amount_minor_units = models.PositiveIntegerField()
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.SENT)
    error = models.TextField(blank=True)
    sent_at = models.DateTimeField()

    class Meta:
        ordering = ["prolific_study", "pk"]

    def __str__(self) -> str:
        return f"screen-out {self.pk} ({self.outcome})"


class Message(models.Model):
    """One message sent to participants through Prolific's messages API.

    ``recipients`` are the participants' pseudonyms (never their Prolific IDs); ``template`` is
    the key of :data:`~.messages.MESSAGE_TEMPLATES` or ``custom``; ``body`` the text sent. The
    row is committed with ``outcome`` ``sent`` before the request (a message is never sent
    twice), then becomes ``done`` or ``failed`` (with ``error``).
    """

    class Outcome(models.TextChoices):
        SENT = "sent", "Sent, answer pending"
        DONE = "done", "Delivered to Prolific"
        FAILED = "failed", "Failed"

    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="messages")
    recipients = models.JSONField(default=list)
    template = models.CharField(max_length=30)
    body = models.TextField()
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.SENT)
    error = models.TextField(blank=True)
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sent_at = models.DateTimeField()

    class Meta:
        ordering = ["-sent_at", "-pk"]

    def __str__(self) -> str:
        return f"message {self.pk} ({self.template}, {len(self.recipients)} recipient(s))"


class ReviewDecision(models.Model):
    """One researcher's decision on a held submission: approve, ask for a return, or reject.

    Written and committed with ``outcome`` ``sent`` *before* the request goes to Prolific, so that
    a double click, a second tab or a retry finds it and sends nothing: at most one decision per
    submission is ``sent``, ``done`` or ``unknown`` (a unique constraint). ``failed`` means
    Prolific answered with an error, so nothing happened there and a new decision may be made
    (the failed row stays, as the record). ``unknown`` means the request may or may not have
    reached Prolific (a transport error on a request that is not idempotent, asking for a
    return): it is never sent again by the platform; check on Prolific.

    ``decided_by`` is the researcher (``None`` from the command line, which records
    ``decided_via``), ``note`` why, ``evidence`` what the page showed when the decision was
    confirmed (pseudonym, flags, exclusions, answers), ``message`` what the participant is told
    (a rejection's message of at least 100 characters; a return's reason).
    """

    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        REQUEST_RETURN = "request_return", "Ask for a return"
        REJECT = "reject", "Reject"

    class Outcome(models.TextChoices):
        SENT = "sent", "Sent, answer pending"
        DONE = "done", "Done on Prolific"
        FAILED = "failed", "Prolific refused: nothing was done"
        UNKNOWN = "unknown", "No answer from Prolific: check there before doing anything"

    #: The outcomes that block another decision on the same submission.
    ACTIVE_OUTCOMES = (Outcome.SENT, Outcome.DONE, Outcome.UNKNOWN)

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="decisions")
    action = models.CharField(max_length=20, choices=Action.choices)
    rejection_category = models.CharField(
        max_length=30, blank=True, choices=[(c, c) for c in REJECTION_CATEGORIES]
    )
    message = models.TextField(blank=True)
    note = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.SENT)
    error = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_via = models.CharField(max_length=20, default="page")
    decided_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["submission", "decided_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission"],
                condition=models.Q(outcome__in=["sent", "done", "unknown"]),
                name="review_decision_one_active_per_submission",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} of {self.submission.submission_id} ({self.outcome})"


class ProlificCredentials(models.Model):
    """A study's own Prolific credentials, encrypted at rest (``prolific/credentials.py``).

    ``api_token_encrypted`` and ``webhook_secret_encrypted`` are Fernet tokens (AES-128-CBC with
    HMAC-SHA256) under ``PROLIFIC_CREDENTIALS_KEYS``, or empty when the study uses the
    instance's ``PROLIFIC_API_TOKEN`` / ``PROLIFIC_WEBHOOK_SECRET``. The plain values are never
    stored, shown, logged or exported; read them only through
    :func:`~spotlight_study.prolific.credentials.study_credentials`.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific_credentials")
    api_token_encrypted = models.TextField(blank=True)
    webhook_secret_encrypted = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        # Never the values: only whether each is set.
        token = "set" if self.api_token_encrypted else "not set"
        secret = "set" if self.webhook_secret_encrypted else "not set"
        return f"Prolific credentials of study {self.study_id} (token {token}, webhook secret {secret})"
