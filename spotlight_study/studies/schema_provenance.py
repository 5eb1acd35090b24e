"""The optional ``provenance`` of a setting in a study file: how its texts and patterns were
obtained on the Stimuli pages (stimulus set, generation, mining job, mined patterns, sample).

``export_study`` writes it for every setting built from mined patterns, and ``import_study``
stores it on the setting (``Setting.provenance``), so a study file carries the record across
copies. Nothing else reads it: the participant flow uses the setting's texts and patterns.
docs/study-file.md documents the fields.

The choices repeat those of the stimuli app's models (``StimulusSet.Source``,
``MiningJob.Method``, ``SettingSource.Selection``), which this app cannot import (it is below
stimuli); a test checks that both agree.
"""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

SOURCES = ("imported", "generated")
METHODS = ("premise", "ctfidf")
SELECTIONS = ("random", "hand")


class _Number(serializers.Field):
    """An int or a float, kept as given (``FloatField`` would turn ``top_k: 25`` into 25.0, and a
    copy of the file would then differ from its original)."""

    default_error_messages = {"invalid": "A number is required."}

    def to_internal_value(self, data: Any) -> int | float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


def _text(**kwargs: Any) -> serializers.CharField:
    """A text of the record, kept exactly (not stripped), so that a copy equals its original."""
    return serializers.CharField(trim_whitespace=False, **kwargs)


class StimulusSetProvenanceSerializer(serializers.Serializer):
    """The stimulus set the texts were taken from (its title, origin and group labels)."""

    title = _text(max_length=200)
    source = serializers.ChoiceField(choices=SOURCES)
    group1_label = _text(allow_blank=True)
    group2_label = _text(allow_blank=True)
    source_detail = _text(max_length=500, allow_blank=True)


class GenerationProvenanceSerializer(serializers.Serializer):
    """How a generated stimulus set was generated (Chat Completions parameters; never a key)."""

    base_url = _text(max_length=500)
    model = _text(max_length=200)
    prompt_group1 = _text()
    prompt_group2 = _text()
    n_per_group = serializers.IntegerField(min_value=1, max_value=5000)
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0)
    top_p = serializers.FloatField(min_value=0.0, max_value=1.0)
    max_tokens = serializers.IntegerField(min_value=1, max_value=100_000)
    seed = serializers.IntegerField(allow_null=True)


class MiningProvenanceSerializer(serializers.Serializer):
    """The mining job: method, spaCy pipeline (empty: ``spacy.blank("en")``), parameters, and the
    outputs mined per group (``n_excluded``: outputs without any token, left out)."""

    method = serializers.ChoiceField(choices=METHODS)
    pipeline = _text(max_length=100, allow_blank=True)
    params = serializers.DictField(child=_Number())
    n_group1 = serializers.IntegerField(min_value=0, allow_null=True)
    n_group2 = serializers.IntegerField(min_value=0, allow_null=True)
    n_excluded = serializers.IntegerField(min_value=0)


class MinedPatternProvenanceSerializer(serializers.Serializer):
    """One mined pattern as the miner reported it: ``clauses`` is a conjunction of "or" clauses
    (``[["He", "he"], ["his"]]``); counts are outputs per group containing it; ``mdl_gain`` in
    bits (Premise), ``fisher_p`` one-sided, ``score`` (c-TF-IDF)."""

    rank = serializers.IntegerField(min_value=0)
    clauses = serializers.ListField(
        child=serializers.ListField(child=_text(max_length=100), min_length=1),
        min_length=1,
    )
    group = serializers.ChoiceField(choices=[1, 2])
    count_group1 = serializers.IntegerField(min_value=0)
    count_group2 = serializers.IntegerField(min_value=0)
    mdl_gain = serializers.FloatField(allow_null=True)
    fisher_p = serializers.FloatField(min_value=0.0, max_value=1.0, allow_null=True)
    score = serializers.FloatField(allow_null=True)


class ProvenanceSerializer(serializers.Serializer):
    """``provenance`` of a setting built from mined patterns (optional).

    ``group1_outputs``/``group2_outputs`` are the 0-based indices, in the stimulus set's group,
    of the outputs shown, in setting order; with ``selection: random`` they were sampled with
    ``random.Random(seed)`` from the outputs of at most ``max_chars`` characters. ``generation``
    is null for imported outputs.
    """

    stimulus_set = StimulusSetProvenanceSerializer()
    generation = GenerationProvenanceSerializer(allow_null=True)
    mining = MiningProvenanceSerializer()
    target_pattern = MinedPatternProvenanceSerializer()
    distractor_patterns = MinedPatternProvenanceSerializer(many=True)
    selection = serializers.ChoiceField(choices=SELECTIONS)
    seed = serializers.IntegerField(allow_null=True)
    max_chars = serializers.IntegerField(min_value=1, allow_null=True)
    group1_outputs = serializers.ListField(child=serializers.IntegerField(min_value=0), min_length=1)
    group2_outputs = serializers.ListField(child=serializers.IntegerField(min_value=0), min_length=1)

    def validate(self, attrs: dict) -> dict:
        if attrs["selection"] == "random" and attrs["seed"] is None:
            raise serializers.ValidationError({"seed": "A random sample records its seed."})
        if attrs["selection"] == "hand" and attrs["seed"] is not None:
            raise serializers.ValidationError({"seed": "Outputs picked by hand have no seed: null."})
        if (attrs["generation"] is None) != (attrs["stimulus_set"]["source"] == "imported"):
            raise serializers.ValidationError(
                {"generation": "Give it for a generated stimulus set, null for imported outputs."}
            )
        return attrs


def mined_tokens(clauses: list[list[str]]) -> list[str]:
    """The tokens a setting's box shows for a mined pattern: every token of every clause, first
    occurrence first (as the stimuli app builds a setting)."""
    return list(dict.fromkeys(tok for clause in clauses for tok in clause))


def provenance_errors(setting: dict) -> dict[str, str]:
    """Where a validated setting disagrees with its ``provenance``, by path below the setting.

    The patterns must be the target pattern and the distractors the record names (tokens and
    group, in order), and each group must have as many texts as the record has outputs: a
    provenance that no longer describes the setting would mislead whoever reads it.
    """
    provenance = setting.get("provenance")
    if not provenance:
        return {}
    errors: dict[str, str] = {}
    hint = "change both, or remove `provenance` if the setting no longer comes from mining."

    def shown(patterns: list[dict]) -> list[tuple[list[str], int]]:
        return [(list(p["tokens"]), int(p["group"])) for p in patterns]

    def mined(patterns: list[dict]) -> list[tuple[list[str], int]]:
        return [(mined_tokens(p["clauses"]), int(p["group"])) for p in patterns]

    if shown(setting["patterns"]) != mined([provenance["target_pattern"]]):
        errors["patterns"] = f"Must be the one pattern of provenance.target_pattern; {hint}"
    if shown(setting["distractor_patterns"]) != mined(provenance["distractor_patterns"]):
        errors["distractor_patterns"] = f"Must be those of provenance.distractor_patterns; {hint}"
    for group in ("group1", "group2"):
        n_texts, n_outputs = len(setting[group]), len(provenance[f"{group}_outputs"])
        if n_texts != n_outputs:
            errors[f"provenance.{group}_outputs"] = (
                f"Names {n_outputs} outputs but {group} has {n_texts} texts; {hint}"
            )
    return errors
