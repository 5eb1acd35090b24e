"""Forms of the annotator and adjudicator pages."""

from __future__ import annotations

from django import forms

from spotlight_study.studies.schema import normalize_tag

from .models import Exclusion
from .services.labels import LabelInput

YES_NO = [("1", "Yes"), ("0", "No")]


def _yes_no(label: str) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(
        label=label,
        choices=YES_NO,
        coerce=lambda v: v == "1",
        widget=forms.RadioSelect,
        error_messages={"required": "Please choose yes or no."},
    )


class LabelForm(forms.Form):
    """One label: three yes/no questions, codebook tags, new tags and the exclusion.

    ``codebook`` (the setting's tags) gives the tag choices. Yes/no questions have no default, so
    an unanswered question is an error rather than a silent "no". ``base_revision`` (hidden)
    carries the revision of the annotator's label the page showed, so that a save from an older
    page (a second tab) is caught instead of overwriting (see ``services.labels.label_save``).
    """

    identified = _yes_no("Did the participant identify the target difference?")
    surface_difference = _yes_no("Did they name the surface difference?")
    no_difference = _yes_no("Do they claim there is no difference?")
    tags = forms.MultipleChoiceField(
        label="Other differences they report (codebook tags)",
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    new_tags = forms.CharField(
        label="Other differences not in the codebook (comma-separated; added to the codebook)",
        required=False,
        max_length=300,
    )
    exclusion = forms.ChoiceField(
        label="Exclude this answer?",
        choices=Exclusion.choices,
        initial=Exclusion.NONE,
        widget=forms.RadioSelect,
    )
    exclusion_note = forms.CharField(
        label="Note (required for 'other')",
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off"}),
    )
    base_revision = forms.IntegerField(
        required=False,
        min_value=0,
        widget=forms.HiddenInput,
        error_messages={"invalid": "The page is damaged; reload it and label again."},
    )

    def __init__(self, *args, codebook: tuple[str, ...] | list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tags"].choices = [(t, t) for t in codebook]

    @classmethod
    def initial_from(cls, label: dict | None) -> dict:
        """Form initial data from a label dict (``label_dict()``), or defaults for ``None``."""
        if not label:
            return {"exclusion": Exclusion.NONE}
        return {
            "identified": "1" if label["identified"] else "0",
            "surface_difference": "1" if label["surface_difference"] else "0",
            "no_difference": "1" if label["no_difference"] else "0",
            "tags": list(label["tags"]),
            "exclusion": label["exclusion"],
            "exclusion_note": label["exclusion_note"],
        }

    def label_dict(self) -> dict:
        """The submitted label in the shape of ``label_dict()`` (new tags merged into ``tags``);
        call after ``is_valid()``."""
        label = self.label_input()
        return {
            "identified": label.identified,
            "surface_difference": label.surface_difference,
            "no_difference": label.no_difference,
            "tags": sorted({normalize_tag(t) for t in [*label.tags, *label.new_tags]}),
            "exclusion": label.exclusion,
            "exclusion_note": label.exclusion_note.strip(),
        }

    def label_input(self) -> LabelInput:
        """The cleaned data as a :class:`~.services.labels.LabelInput` (call after
        ``is_valid()``)."""
        d = self.cleaned_data
        return LabelInput(
            identified=d["identified"],
            surface_difference=d["surface_difference"],
            no_difference=d["no_difference"],
            tags=list(d["tags"]),
            new_tags=[t for t in d["new_tags"].split(",") if t.strip()],
            exclusion=d["exclusion"],
            exclusion_note=d["exclusion_note"],
        )


class MachineAcceptanceForm(forms.Form):
    """The researcher's accept or revoke of one model's machine labels for label fields.

    ``models`` (the models with machine labels in the study) gives the model choices. The
    ``confirm`` box must be ticked: accepting changes final labels that feed the analysis.
    """

    ACTIONS = [("accept", "Accept as final labels"), ("revoke", "Revoke")]

    model = forms.ChoiceField(label="Model")
    fields = forms.MultipleChoiceField(
        label="Label fields", widget=forms.CheckboxSelectMultiple, choices=[]
    )
    action = forms.ChoiceField(choices=ACTIONS, initial="accept", widget=forms.RadioSelect)
    confirm = forms.BooleanField(
        label=(
            "I want these machine labels used as final labels of the items without a human "
            "final label (or, for revoke, removed again)."
        ),
        error_messages={"required": "Tick the box to confirm."},
    )

    def __init__(self, *args, models: list[str], label_fields: tuple[str, ...], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [(m, f"llm:{m}") for m in models]
        self.fields["fields"].choices = [(f, f) for f in label_fields]
