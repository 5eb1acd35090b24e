"""Serializers of Prolific: settings, submissions, sync and review reports, bonus payments."""
from __future__ import annotations

from rest_framework import serializers

from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, ReviewDecision, Submission
from spotlight_study.prolific.payloads import REJECTION_CATEGORIES

from .strict import StrictInputSerializer


class ProlificStudySerializer(serializers.ModelSerializer):
    """A study's Prolific settings (reward in minor units) with review counts."""

    to_approve = serializers.IntegerField(read_only=True)
    held = serializers.IntegerField(read_only=True)
    failed_checks = serializers.IntegerField(read_only=True)
    status_counts = serializers.DictField(child=serializers.IntegerField(), read_only=True)

    class Meta:
        model = ProlificStudy
        fields = [
            "prolific_id", "prolific_status", "description", "reward_minor_units",
            "total_available_places", "device_compatibility", "filters", "participant_group_id",
            "completed_action", "failed_check_review", "rejection_category",
            "external_study_url", "last_synced_at", "to_approve", "held", "failed_checks", "status_counts",
        ]
        read_only_fields = fields


class SubmissionSerializer(serializers.ModelSerializer):
    """A mirrored Prolific submission. ``submission`` is Prolific's submission id (the study
    URL's SESSION_ID); ``participant`` the pseudonym of who arrived with it (``null`` if nobody
    did). ``status`` is Prolific's, ``participant_status`` ours."""

    submission = serializers.CharField(source="submission_id", read_only=True)
    participant = serializers.SerializerMethodField()
    participant_status = serializers.CharField(source="participant.status", read_only=True, allow_null=True, default=None)
    cell = serializers.IntegerField(source="participant.cell_index", read_only=True, allow_null=True, default=None)
    instruction_check_passed = serializers.BooleanField(
        source="participant.instruction_check_passed", read_only=True, allow_null=True, default=None
    )

    class Meta:
        model = Submission
        fields = [
            "submission", "participant", "status", "participant_status", "cell",
            "instruction_check_passed", "review_action", "status_at", "entry_verified",
        ]
        read_only_fields = fields

    def get_participant(self, obj: Submission) -> str | None:
        """The participant's pseudonym, or ``null``."""
        if obj.participant is None:
            return None
        return participant_pseudonym(study=self.context["study"], prolific_pid=obj.participant.prolific_pid)


class SyncReportSerializer(serializers.Serializer):
    """What a sync did (see ``prolific.services.submissions.SyncReport``)."""

    fetched = serializers.IntegerField()
    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    stale = serializers.IntegerField()
    ignored = serializers.IntegerField()
    freed = serializers.IntegerField()
    unmatched = serializers.IntegerField()


class ReviewRequestSerializer(StrictInputSerializer):
    """``dry_run``: report what would be done, send nothing."""

    dry_run = serializers.BooleanField(default=False)


class ReviewReportSerializer(serializers.Serializer):
    """What a review action did (see ``prolific.services.review.ReviewReport``)."""

    action = serializers.CharField()
    selected = serializers.IntegerField()
    done = serializers.IntegerField()
    api_calls = serializers.IntegerField()
    dry_run = serializers.BooleanField()
    errors = serializers.ListField(child=serializers.CharField())
    held = serializers.ListField(child=serializers.DictField(), required=False)


class BonusDraftSerializer(StrictInputSerializer):
    """A bonus CSV: ``id,amount`` per line, amounts in major units (``1.50``)."""

    csv = serializers.CharField(max_length=1_000_000)


class BonusItemSerializer(serializers.Serializer):
    """One bonus (``amount_minor`` in minor units)."""

    participant = serializers.CharField()
    amount_minor = serializers.IntegerField()


class BonusPaymentSerializer(serializers.ModelSerializer):
    """A bonus payment: its lines, total (minor units) and status."""

    items = BonusItemSerializer(many=True, read_only=True)
    total_major = serializers.CharField(read_only=True, help_text="The total in major units.")

    class Meta:
        model = BonusPayment
        fields = [
            "id", "status", "items", "total_minor_units", "total_major", "bulk_id",
            "pay_sent_at", "paid_at", "error", "created_at",
        ]
        read_only_fields = fields


class ReviewDecisionSerializer(serializers.ModelSerializer):
    """A recorded decision on a held submission: who (``decided_by`` username, ``null`` from the
    command line), when, why (``note``), the evidence shown, and Prolific's ``outcome``."""

    submission = serializers.CharField(source="submission.submission_id", read_only=True)
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ReviewDecision
        fields = [
            "submission", "action", "rejection_category", "message", "note", "evidence", "outcome",
            "error", "decided_by", "decided_via", "decided_at", "answered_at",
        ]
        read_only_fields = fields


class HeldAnswerSerializer(serializers.Serializer):
    """One answer of a held submission: setting key, position (0: training), text, flags."""

    setting = serializers.CharField()
    position = serializers.IntegerField()
    answer = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())


class HeldSubmissionSerializer(serializers.Serializer):
    """A submission held back from bulk approval (``prolific.selectors.HeldSubmission``)."""

    submission = serializers.CharField(source="submission.submission_id")
    participant = serializers.CharField(source="pseudonym")
    reasons = serializers.ListField(child=serializers.CharField())
    flags = serializers.ListField(source="evidence.flags", child=serializers.CharField())
    holding_flags = serializers.ListField(child=serializers.CharField())
    exclusions = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    answers = HeldAnswerSerializer(source="evidence.answers", many=True)
    decision = ReviewDecisionSerializer(allow_null=True)


class HeldDecisionRequestSerializer(StrictInputSerializer):
    """A decision on a held submission. ``confirm`` must be ``true`` (the confirmation step);
    ``rejection_category`` and ``message`` (at least 100 characters) go with ``reject``; for
    ``request_return`` the message is the reason given (empty: a neutral default)."""

    action = serializers.ChoiceField(choices=ReviewDecision.Action.values)
    rejection_category = serializers.ChoiceField(choices=["", *REJECTION_CATEGORIES], required=False, default="")
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    confirm = serializers.BooleanField(default=False)


class HeldDecisionSerializer(serializers.Serializer):
    """The answer to a decision: the recorded ``decision`` and whether this request made it."""

    decision = ReviewDecisionSerializer()
    created = serializers.BooleanField()
