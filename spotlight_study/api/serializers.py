"""Serializers of the researcher API. Every field is listed explicitly.

Participants appear only as their export pseudonym (``participant``: ``p_`` + 16 hex digits);
no serializer here has a field for the raw Prolific ID, study ID or session ID.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, Submission
from spotlight_study.studies.models import Setting, Study, TokenPattern


@extend_schema_field(OpenApiTypes.STR)
class PseudonymField(serializers.Field):
    """The participant pseudonym of a participant (read from ``context["study"]``)."""

    def __init__(self, **kwargs):
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, participant: Participant) -> str:
        return participant_pseudonym(study=self.context["study"], prolific_pid=participant.prolific_pid)


# --- studies -----------------------------------------------------------------------------


class CompletionCodesSerializer(serializers.Serializer):
    """The study's Prolific completion codes."""

    completed = serializers.CharField(source="completion_code")
    failed_instruction_check = serializers.CharField(source="failed_check_code")
    no_consent = serializers.CharField(source="no_consent_code")


class StudySerializer(serializers.ModelSerializer):
    """A study definition (times in minutes; ``max_answer_chars`` in characters)."""

    completion_codes = CompletionCodesSerializer(source="*", read_only=True)
    n_participants = serializers.IntegerField(read_only=True, help_text="Participants who arrived.")

    class Meta:
        model = Study
        fields = [
            "slug", "title", "status", "conditions", "completion_codes", "estimated_minutes",
            "maximum_minutes", "abandonment_timeout_minutes", "target_sample_size",
            "min_answer_chars", "max_answer_chars", "short_time_flag_seconds",
            "failed_check_policy", "annotators_per_item", "annotation_reservation_minutes",
            "task_prompt", "n_participants", "created_at", "updated_at",
        ]
        read_only_fields = fields


class StudyImportJSONSerializer(serializers.Serializer):
    """Import a study from its file's content as JSON (same fields as the YAML file)."""

    study = serializers.DictField(help_text="The study file as a JSON object (see fixtures/).")
    replace = serializers.BooleanField(
        default=False, help_text="Replace the study with this slug (only before anyone took part)."
    )


class StudyImportUploadSerializer(serializers.Serializer):
    """Import a study from an uploaded YAML (``.yaml``/``.yml``) or JSON (``.json``) file."""

    file = serializers.FileField()
    replace = serializers.BooleanField(default=False)


class TokenPatternSerializer(serializers.ModelSerializer):
    """A token pattern: ``tokens``, ``group`` (1 or 2, where it is more frequent)."""

    label = serializers.CharField(read_only=True)

    class Meta:
        model = TokenPattern
        fields = ["tokens", "group", "is_distractor", "position", "label"]
        read_only_fields = fields


class SettingSerializer(serializers.ModelSerializer):
    """A setting: its two groups of texts, patterns and annotation codebook."""

    group1 = serializers.ListField(source="group1_texts", child=serializers.CharField(), read_only=True)
    group2 = serializers.ListField(source="group2_texts", child=serializers.CharField(), read_only=True)
    patterns = TokenPatternSerializer(many=True, read_only=True)

    class Meta:
        model = Setting
        fields = [
            "key", "kind", "position", "title", "group1", "group2", "patterns",
            "target_description", "check_keywords", "surface_difference", "annotation_tags",
        ]
        read_only_fields = fields


class CellTaskSerializer(serializers.Serializer):
    """One task of a cell: a main setting with its condition."""

    setting = serializers.CharField()
    condition = serializers.CharField()


class CellSerializer(serializers.Serializer):
    """A counterbalancing cell and its counts.

    ``places_held`` is what balancing uses (completed plus in progress within the abandonment
    timeout); the other counts split the cell's participants by state.
    """

    index = serializers.IntegerField()
    label = serializers.CharField()
    tasks = CellTaskSerializer(many=True)
    places_held = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class DashboardCellSerializer(serializers.Serializer):
    """A cell on the researcher page: participants by state."""

    index = serializers.IntegerField()
    label = serializers.CharField()
    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class MedianTimeSerializer(serializers.Serializer):
    """Median time on task of a setting and condition, in seconds."""

    setting = serializers.CharField()
    condition = serializers.CharField()
    n = serializers.IntegerField()
    median_s = serializers.FloatField()


class FlagSerializer(serializers.Serializer):
    """A flagged participant (pseudonym)."""

    participant = serializers.CharField()
    cell = serializers.IntegerField()
    status = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())


class TotalsSerializer(serializers.Serializer):
    """Participants by state over all cells."""

    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class DashboardSerializer(serializers.Serializer):
    """The researcher page's figures (``study_dashboard``)."""

    cells = DashboardCellSerializer(many=True)
    totals = TotalsSerializer()
    median_times = MedianTimeSerializer(many=True)
    flags = FlagSerializer(many=True)


# --- participants and answers ------------------------------------------------------------


class ParticipantSerializer(serializers.ModelSerializer):
    """A participant, pseudonymized. ``prolific_status`` is the latest status on Prolific
    (``null`` until synced)."""

    participant = PseudonymField(source="*")
    cell = serializers.IntegerField(source="cell_index", read_only=True)
    prolific_status = serializers.SerializerMethodField()

    class Meta:
        model = Participant
        fields = [
            "participant", "cell", "cell_plan", "status", "step", "task_index", "started_at",
            "finished_at", "consented_at", "instruction_check_passed", "comment",
            "assignment_counts", "assignment_seed", "prolific_status",
        ]
        read_only_fields = fields

    def get_prolific_status(self, obj: Participant) -> str | None:
        """The status of the participant's latest mirrored Prolific submission."""
        subs = list(obj.prolific_submissions.all())
        return max(subs, key=lambda s: s.status_at).status if subs else None


class ResponseSerializer(serializers.ModelSerializer):
    """A saved answer (training or main). Times are ISO 8601 UTC; ``*_ms`` in milliseconds.

    ``identified``, ``other_difference`` and ``no_difference`` come from the answer's final
    annotation label (``null`` until it exists). ``flags``, ``excluded`` and
    ``exclusion_reason`` are those of ``responses.csv`` (main answers; ``null`` for training).
    """

    participant = PseudonymField()
    setting = serializers.CharField(source="setting.key", read_only=True)
    kind = serializers.CharField(source="setting.kind", read_only=True)
    cell = serializers.IntegerField(source="participant.cell_index", read_only=True)
    identified = serializers.SerializerMethodField()
    other_difference = serializers.SerializerMethodField()
    no_difference = serializers.SerializerMethodField()
    flags = serializers.SerializerMethodField()
    excluded = serializers.SerializerMethodField()
    exclusion_reason = serializers.SerializerMethodField()

    class Meta:
        model = TaskResponse
        fields = [
            "participant", "setting", "kind", "condition", "position", "cell", "answer",
            "served_at", "answered_at", "time_on_task_ms", "paste_count", "paste_chars",
            "hidden_ms", "blur_count", "serve_count", "identified", "other_difference",
            "no_difference", "flags", "excluded", "exclusion_reason",
        ]
        read_only_fields = fields

    def _final(self, obj):
        return self.context["finals"].get(obj.pk)

    def _row(self, obj) -> dict | None:
        pseudonym = participant_pseudonym(study=self.context["study"], prolific_pid=obj.participant.prolific_pid)
        return self.context["export_rows"].get((pseudonym, obj.setting.key))

    def get_identified(self, obj) -> bool | None:
        """From the final label."""
        final = self._final(obj)
        return None if final is None else bool(final.identified)

    def get_other_difference(self, obj) -> bool | None:
        """True when the final label has at least one tag."""
        final = self._final(obj)
        return None if final is None else bool(final.tags)

    def get_no_difference(self, obj) -> bool | None:
        """From the final label."""
        final = self._final(obj)
        return None if final is None else bool(final.no_difference)

    def get_flags(self, obj) -> list[str] | None:
        """``pasted``, ``very_short_time``, ``identical_answer``, ``failed_instruction_check``."""
        row = self._row(obj)
        return None if row is None else [f for f in row["flags"].split(";") if f]

    def get_excluded(self, obj) -> bool | None:
        """Whether the export excludes the answer."""
        row = self._row(obj)
        return None if row is None else bool(row["excluded"])

    def get_exclusion_reason(self, obj) -> str | None:
        """Why it is excluded (empty when it is not)."""
        row = self._row(obj)
        return None if row is None else row["exclusion_reason"]


class SurveyAnswerSerializer(serializers.ModelSerializer):
    """One survey item answered (``response`` 1..5)."""

    participant = PseudonymField()

    class Meta:
        model = SurveyAnswer
        fields = ["participant", "condition", "item", "response"]
        read_only_fields = fields


# --- annotation --------------------------------------------------------------------------


class AnnotatorSerializer(serializers.Serializer):
    """An annotator of the study with the number of labels they saved."""

    pseudonym = serializers.CharField()
    username = serializers.CharField()
    labels = serializers.IntegerField()


class AnnotationStatusSerializer(serializers.Serializer):
    """Items by status."""

    final = serializers.IntegerField()
    needs_adjudication = serializers.IntegerField()
    in_progress = serializers.IntegerField()


class AnnotationProgressSerializer(serializers.Serializer):
    """Annotation progress of a study (``researcher_overview`` without the agreement table)."""

    items = serializers.IntegerField()
    status = AnnotationStatusSerializer()
    final_sources = serializers.DictField(child=serializers.IntegerField())
    annotators = AnnotatorSerializer(many=True)


class AgreementRowSerializer(serializers.Serializer):
    """Agreement on one label over a scope, for all annotators, a pair of annotators or one
    annotator against the final labels (``comparison``); an undefined statistic is ``null`` with
    its reason."""

    field = serializers.CharField()
    scope = serializers.CharField()
    comparison = serializers.ChoiceField(choices=["all", "pair", "vs_final"])
    rater_a = serializers.CharField(allow_blank=True)
    rater_b = serializers.CharField(allow_blank=True)
    n_items = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    n_ratings = serializers.IntegerField()
    percent_agreement = serializers.FloatField(allow_null=True)
    percent_agreement_note = serializers.CharField(allow_blank=True)
    cohen_kappa = serializers.FloatField(allow_null=True)
    cohen_kappa_note = serializers.CharField(allow_blank=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    krippendorff_alpha_note = serializers.CharField(allow_blank=True)

    def to_representation(self, row: dict) -> dict:
        """Empty CSV values become ``null``."""
        data = dict(row)
        for name in ("percent_agreement", "cohen_kappa", "krippendorff_alpha"):
            if data.get(name) == "":
                data[name] = None
        return super().to_representation(data)


class FinalLabelSerializer(serializers.Serializer):
    """One item's final label (the row of ``final_labels.csv``; labels empty unless final)."""

    item = serializers.CharField()
    participant = serializers.CharField()
    setting = serializers.CharField()
    kind = serializers.CharField()
    condition = serializers.CharField()
    status = serializers.CharField()
    identified = serializers.BooleanField(allow_null=True, required=False)
    surface_difference = serializers.BooleanField(allow_null=True, required=False)
    no_difference = serializers.BooleanField(allow_null=True, required=False)
    other_difference = serializers.BooleanField(allow_null=True, required=False)
    tags = serializers.ListField(child=serializers.CharField(), allow_null=True, required=False)
    exclusion = serializers.CharField(allow_null=True, required=False)
    exclusion_note = serializers.CharField(allow_null=True, required=False, allow_blank=True)
    source = serializers.CharField(allow_null=True, required=False)
    decided_at = serializers.CharField(allow_null=True, required=False)

    def to_representation(self, row: dict) -> dict:
        """CSV values as JSON: 0/1 as booleans, ``;``-separated tags as a list, missing as null."""
        data = dict(row)
        final = data.get("status") == "final"
        for name in ("identified", "surface_difference", "no_difference", "other_difference"):
            data[name] = bool(int(data[name])) if final and data.get(name) not in (None, "") else None
        data["tags"] = [t for t in str(data.get("tags", "")).split(";") if t] if final else None
        for name in ("exclusion", "exclusion_note", "source", "decided_at"):
            data[name] = data.get(name) if final else None
        return super().to_representation(data)


class FinalLabelQuerySerializer(serializers.Serializer):
    """Filters of the final-labels list."""

    status = serializers.ChoiceField(choices=["final", "needs_adjudication", "in_progress"], required=False)
    setting = serializers.CharField(required=False, max_length=50)
    kind = serializers.ChoiceField(choices=Setting.Kind.values, required=False)


# --- analysis ----------------------------------------------------------------------------


class AnalysisResultSerializer(serializers.Serializer):
    """The content of ``results.json`` written by ``analysis.run_analysis`` (see analysis/)."""

    results = serializers.DictField()


# --- stimuli -----------------------------------------------------------------------------


class StimulusSetSerializer(serializers.Serializer):
    """Two groups of LLM outputs (imported or generated) with their sizes."""

    id = serializers.IntegerField()
    title = serializers.CharField()
    source = serializers.CharField()
    group1_label = serializers.CharField()
    group2_label = serializers.CharField()
    source_detail = serializers.CharField()
    n_group1 = serializers.IntegerField()
    n_group2 = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class OutputSerializer(serializers.Serializer):
    """One LLM output of a group (``index`` from 0)."""

    group = serializers.IntegerField()
    index = serializers.IntegerField()
    text = serializers.CharField()


class JobProgressSerializer(serializers.Serializer):
    """A background job's progress: ``done`` of ``total`` units of its current ``stage``."""

    kind = serializers.CharField()
    id = serializers.IntegerField()
    status = serializers.CharField()
    stage = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    stale = serializers.BooleanField()
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)


class GenerationJobSerializer(serializers.Serializer):
    """A generation job: its parameters, stimulus set and progress."""

    id = serializers.IntegerField()
    stimulus_set = serializers.IntegerField(source="stimulus_set_id")
    model = serializers.CharField()
    prompt_group1 = serializers.CharField()
    prompt_group2 = serializers.CharField()
    n_per_group = serializers.IntegerField()
    temperature = serializers.FloatField()
    top_p = serializers.FloatField()
    max_tokens = serializers.IntegerField()
    seed = serializers.IntegerField(allow_null=True)
    base_url = serializers.CharField()
    progress = JobProgressSerializer()


class GenerationJobCreateSerializer(serializers.Serializer):
    """Generate ``n_per_group`` outputs per group with the configured OpenAI-compatible server."""

    title = serializers.CharField(max_length=200)
    prompt_group1 = serializers.CharField(max_length=20000)
    prompt_group2 = serializers.CharField(max_length=20000)
    model = serializers.CharField(max_length=200)
    n_per_group = serializers.IntegerField(min_value=1, max_value=5000)
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, default=1.0)
    top_p = serializers.FloatField(min_value=0.0, max_value=1.0, default=1.0)
    max_tokens = serializers.IntegerField(min_value=1, max_value=100_000, default=256)
    seed = serializers.IntegerField(
        required=False, allow_null=True, min_value=-(2**62), max_value=2**62, default=None
    )


class MiningJobSerializer(serializers.Serializer):
    """A mining job: method, parameters, sizes, timings per stage (ms) and progress."""

    id = serializers.IntegerField()
    stimulus_set = serializers.IntegerField(source="stimulus_set_id")
    method = serializers.CharField()
    pipeline = serializers.CharField(allow_blank=True)
    params = serializers.DictField()
    n_group1 = serializers.IntegerField(allow_null=True)
    n_group2 = serializers.IntegerField(allow_null=True)
    n_excluded = serializers.IntegerField()
    timings_ms = serializers.DictField()
    progress = JobProgressSerializer()


class MiningJobCreateSerializer(serializers.Serializer):
    """Mine token patterns in a stimulus set (Premise or c-TF-IDF; see docs/stimuli.md)."""

    stimulus_set = serializers.IntegerField(min_value=1, max_value=2**62)
    method = serializers.ChoiceField(choices=["premise", "ctfidf"], default="premise")
    pipeline = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=100, default=None)
    params = serializers.DictField(
        child=serializers.FloatField(),
        required=False,
        default=dict,
        help_text="Premise: fisher_p_value, clause_max_overlap, min_overlap; c-TF-IDF: top_k.",
    )


class MinedPatternSerializer(serializers.Serializer):
    """A mined pattern: ``clauses`` (an "and" of "or"s of tokens), counts per group, statistics."""

    rank = serializers.IntegerField()
    clauses = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    tokens = serializers.ListField(child=serializers.CharField())
    group = serializers.IntegerField()
    count_group1 = serializers.IntegerField()
    count_group2 = serializers.IntegerField()
    mdl_gain = serializers.FloatField(allow_null=True)
    fisher_p = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    label = serializers.CharField()


# --- prolific ----------------------------------------------------------------------------


class ProlificStudySerializer(serializers.ModelSerializer):
    """A study's Prolific settings (reward in minor units) with review counts."""

    to_approve = serializers.IntegerField(read_only=True)
    failed_checks = serializers.IntegerField(read_only=True)
    status_counts = serializers.DictField(child=serializers.IntegerField(), read_only=True)

    class Meta:
        model = ProlificStudy
        fields = [
            "prolific_id", "prolific_status", "description", "reward_minor_units",
            "total_available_places", "device_compatibility", "filters", "participant_group_id",
            "completed_action", "failed_check_review", "rejection_category",
            "external_study_url", "last_synced_at", "to_approve", "failed_checks", "status_counts",
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
    """What a sync did (see ``prolific.services.SyncReport``)."""

    fetched = serializers.IntegerField()
    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    stale = serializers.IntegerField()
    ignored = serializers.IntegerField()
    freed = serializers.IntegerField()
    unmatched = serializers.IntegerField()


class ReviewRequestSerializer(serializers.Serializer):
    """``dry_run``: report what would be done, send nothing."""

    dry_run = serializers.BooleanField(default=False)


class ReviewReportSerializer(serializers.Serializer):
    """What a review action did (see ``prolific.services.ReviewReport``)."""

    action = serializers.CharField()
    selected = serializers.IntegerField()
    done = serializers.IntegerField()
    api_calls = serializers.IntegerField()
    dry_run = serializers.BooleanField()
    errors = serializers.ListField(child=serializers.CharField())


class BonusDraftSerializer(serializers.Serializer):
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
