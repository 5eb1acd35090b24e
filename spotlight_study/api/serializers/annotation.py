"""Serializers of annotation: progress, agreement rows and final labels."""
from __future__ import annotations

from rest_framework import serializers

from spotlight_study.api.serializers.strict import raw_length_errors
from spotlight_study.studies.models import Setting


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
    its reason. ``is_pilot``: the row is computed over the pilot annotation round's items alone
    (the other rows never count them)."""

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
    is_pilot = serializers.BooleanField()

    def to_representation(self, row: dict) -> dict:
        """Empty CSV values become ``null``; ``is_pilot`` 0/1 a boolean."""
        data = dict(row)
        data["is_pilot"] = bool(data.get("is_pilot"))
        for name in ("percent_agreement", "cohen_kappa", "krippendorff_alpha"):
            if data.get(name) == "":
                data[name] = None
        return super().to_representation(data)


class FinalLabelSerializer(serializers.Serializer):
    """One item's final label (the row of ``final_labels.csv``; labels empty unless final).
    ``is_pilot``: an item of the pilot annotation round (listed only with ``include_pilot``)."""

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
    is_pilot = serializers.BooleanField()

    def to_representation(self, row: dict) -> dict:
        """CSV values as JSON: 0/1 as booleans, ``;``-separated tags as a list, missing as null."""
        data = dict(row)
        data["is_pilot"] = bool(data.get("is_pilot"))
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
    include_pilot = serializers.ChoiceField(
        choices=["true", "false"],
        required=False,
        help_text="Add the pilot annotation round's items (is_pilot true): true or false (default).",
    )

    def validate(self, attrs: dict) -> dict:
        """Refuse a parameter given empty (``?status=``, or white space alone): DRF would leave
        it out silently; and a text longer than its limit as sent (``too_long_problem``)."""
        errors = raw_length_errors(self.fields, self.initial_data)
        errors.update({name: ["Empty: give a value, or leave the parameter out."]
                       for name in self.fields if _blank(self.initial_data.get(name, None))})
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


def _blank(value) -> bool:
    """Whether a query parameter was given (not ``None``) but empty or white space alone."""
    return value is not None and not str(value).strip()
