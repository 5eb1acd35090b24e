"""Serializers of the study's data: participants, saved answers and survey answers (pseudonymized)."""
from __future__ import annotations

from rest_framework import serializers

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym

from .fields import PseudonymField


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
            "assignment_counts", "assignment_seed", "prolific_status", "is_pilot",
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
    ``is_pilot``: a pilot participant's answer (listed only with ``?include_pilot=true``; its
    labels are the pilot annotation round's).
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
    is_pilot = serializers.BooleanField(source="participant.is_pilot", read_only=True)

    class Meta:
        model = TaskResponse
        fields = [
            "participant", "setting", "kind", "condition", "position", "cell", "answer",
            "served_at", "answered_at", "time_on_task_ms", "paste_count", "paste_chars",
            "hidden_ms", "blur_count", "serve_count", "typed_chars", "dropped_chars",
            "replaced_chars", "insertions", "deletions", "typing_ms", "largest_insert_chars",
            "away_before_paste_ms", "shown_overlap_permille", "near_duplicate_score",
            "identified", "other_difference",
            "no_difference", "flags", "excluded", "exclusion_reason", "is_pilot",
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
        """The answer's flags as ``responses.csv`` has them (participation/flags.py order)."""
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
    """One survey item answered: ``response`` is the point chosen (1..5 for an item without a
    type, 1..number of labels for a ``likert`` item), else ``null``; ``value`` is a typed item's
    answer (the option, the list of options checked, the number or the text), else ``null``."""

    participant = PseudonymField()
    is_pilot = serializers.BooleanField(source="participant.is_pilot", read_only=True)

    class Meta:
        model = SurveyAnswer
        fields = ["participant", "condition", "item", "response", "value", "is_pilot"]
        read_only_fields = fields
