"""Forms of the stimuli pages (input validation only; the services do the work)."""
from __future__ import annotations

from django import forms

from spotlight_study.studies.models import Study

from .importers import FORMATS
from .models import MinedPattern, MiningJob, Output, SettingSource


class ImportForm(forms.Form):
    """Two files (group 1, group 2), or one file holding both groups."""

    title = forms.CharField(max_length=200)
    file1 = forms.FileField(label="Group 1 file (or one file with both groups)")
    file2 = forms.FileField(label="Group 2 file", required=False)
    format = forms.ChoiceField(
        choices=[(f, f) for f in FORMATS],
        initial="auto",
        help_text="auto: by extension (.json, .jsonl, .csv, .txt).",
    )
    column = forms.CharField(
        max_length=100, initial="text", help_text="CSV column or JSONL field with the text."
    )
    group_column = forms.CharField(
        max_length=100,
        required=False,
        help_text="One CSV/JSONL file with both groups: the column holding the group.",
    )
    group1_value = forms.CharField(max_length=100, initial="1")
    group2_value = forms.CharField(max_length=100, initial="2")


class GenerationForm(forms.Form):
    """Parameters of a generation job (the server and key come from the settings)."""

    title = forms.CharField(max_length=200)
    prompt_group1 = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    prompt_group2 = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    model = forms.CharField(max_length=200)
    n_per_group = forms.IntegerField(min_value=1, max_value=5000, initial=100)
    temperature = forms.FloatField(min_value=0, max_value=2, initial=1.0)
    top_p = forms.FloatField(min_value=0, max_value=1, initial=1.0)
    max_tokens = forms.IntegerField(min_value=1, max_value=100_000, initial=256)
    seed = forms.IntegerField(
        required=False, min_value=0, help_text="Optional; request i of a group uses seed + i."
    )


class MiningForm(forms.Form):
    """Method, tokenizer and method parameters of a mining job."""

    method = forms.ChoiceField(choices=MiningJob.Method.choices, initial=MiningJob.Method.PREMISE)
    pipeline = forms.CharField(
        max_length=100,
        required=False,
        help_text='An installed spaCy pipeline; empty: the STIMULI_SPACY_PIPELINE setting, '
        'by default spacy.blank("en").',
    )
    fisher_p_value = forms.FloatField(min_value=0, max_value=1, initial=0.01, help_text="Premise")
    clause_max_overlap = forms.FloatField(min_value=0, max_value=1, initial=0.05, help_text="Premise")
    min_overlap = forms.FloatField(min_value=0, max_value=1, initial=0.3, help_text="Premise")
    top_k = forms.IntegerField(min_value=1, max_value=1000, initial=25, help_text="c-TF-IDF: tokens per group")

    def params(self) -> dict:
        """The parameters of the chosen method."""
        d = self.cleaned_data
        if d["method"] == MiningJob.Method.PREMISE:
            return {k: d[k] for k in ("fisher_p_value", "clause_max_overlap", "min_overlap")}
        return {"top_k": d["top_k"]}


class _PatternChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: MinedPattern) -> str:
        return obj.label


class _PatternMultiChoice(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: MinedPattern) -> str:
        return obj.label


class SettingBuildForm(forms.Form):
    """Which study, key and title, which patterns, and which outputs to show."""

    study = forms.ModelChoiceField(queryset=Study.objects.order_by("slug"), to_field_name="slug")
    key = forms.SlugField(max_length=50)
    title = forms.CharField(max_length=200)
    target_description = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="For annotators."
    )
    target = _PatternChoice(queryset=MinedPattern.objects.none(), widget=forms.RadioSelect)
    distractors = _PatternMultiChoice(
        queryset=MinedPattern.objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )
    selection = forms.ChoiceField(
        choices=SettingSource.Selection.choices, initial=SettingSource.Selection.RANDOM
    )
    n_per_group = forms.IntegerField(min_value=1, max_value=100, initial=10)
    seed = forms.IntegerField(
        required=False, min_value=0, help_text="Empty: a new seed is drawn and recorded."
    )
    max_chars = forms.IntegerField(
        required=False, min_value=1, max_value=2000, help_text="Only outputs up to this length."
    )
    picked = forms.ModelMultipleChoiceField(
        queryset=Output.objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args, mining_job: MiningJob, **kwargs):
        super().__init__(*args, **kwargs)
        patterns = mining_job.patterns.order_by("rank")
        self.fields["target"].queryset = patterns
        self.fields["distractors"].queryset = patterns
        self.fields["picked"].queryset = Output.objects.filter(stimulus_set_id=mining_job.stimulus_set_id)

    def clean(self):
        data = super().clean()
        target, distractors = data.get("target"), data.get("distractors") or []
        if target is not None and target in distractors:
            self.add_error("distractors", "The target pattern cannot also be a distractor.")
        if data.get("selection") == SettingSource.Selection.HAND and not data.get("picked"):
            self.add_error("picked", "Pick the outputs to show, or choose a random sample.")
        return data
