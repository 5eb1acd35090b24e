"""The annotator and adjudicator form of a study with a declared codebook: one form field per
codebook field (``cb_<key>``) and one hotkey per option, plus the platform's exclusion.

Under the default codebook the pages keep :class:`~.forms.LabelForm` as it was;
:func:`label_form` picks the form for a study.
"""
from __future__ import annotations

from django import forms

from spotlight_study.studies.schema_codebook import tags_field_key

from .codebook_labels import form_value, is_declared, item_fields
from .forms import YES_NO, LabelForm
from .services.labels import LabelInput

#: Hotkeys in the order options get them: digits, then letters (``s`` is skip).
HOTKEYS = "1234567890abcdefghijklmnopqrtuvwxyz"


def _form_field(field: dict) -> forms.Field:
    kind, required = field["type"], field.get("required", True)
    common = {"label": field["label"], "required": required, "help_text": field.get("help", "")}
    choices = [(o, o) for o in field.get("options", [])]
    if kind == "yes_no":
        return forms.ChoiceField(choices=YES_NO, widget=forms.RadioSelect, **common)
    if kind in ("choice", "ordinal"):
        return forms.ChoiceField(choices=choices, widget=forms.RadioSelect, **common)
    if kind == "multi_choice":
        return forms.MultipleChoiceField(
            choices=choices, widget=forms.CheckboxSelectMultiple, **common
        )
    if kind == "number":
        return forms.FloatField(min_value=field["min"], max_value=field["max"], **common)
    return forms.CharField(
        max_length=1000, widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "off"}), **common
    )


class CodebookLabelForm(LabelForm):
    """:class:`~.forms.LabelForm` with the default codebook's questions replaced by the study's
    own fields (``fields`` as :func:`~.codebook_labels.item_fields` gives them).

    ``codebook_fields`` lists ``(bound field, codebook field, [(option, hotkey), ...])`` for the
    template, in codebook order; new tags stay possible when a field takes tags.
    """

    def __init__(self, *args, codebook: tuple[str, ...] | list[str], fields: list[dict],
                 takes_tags: bool, **kwargs):
        super().__init__(*args, codebook=codebook, **kwargs)
        for name in ("identified", "surface_difference", "no_difference", "tags"):
            del self.fields[name]
        if not takes_tags:
            del self.fields["new_tags"]
        self.codebook_specs = fields
        keys = iter(HOTKEYS)
        self.hotkeys: dict[str, list[tuple[str, str]]] = {}
        for field in fields:
            self.fields[f"cb_{field['key']}"] = _form_field(field)
            options = ["1", "0"] if field["type"] == "yes_no" else field.get("options", [])
            if field["type"] in ("number", "note"):
                options = []
            self.hotkeys[field["key"]] = [(o, next(keys, "")) for o in options]

    @property
    def codebook_fields(self) -> list[tuple]:
        """The template's rows: bound field, codebook field and each option's hotkey."""
        out = []
        for field in self.codebook_specs:
            bound = self[f"cb_{field['key']}"]
            keys = dict(self.hotkeys[field["key"]])
            options = [(w, keys.get(str(w.data["value"]), "")) for w in bound] if keys else []
            out.append((bound, field, options))
        return out

    @classmethod
    def initial_from_values(cls, label: dict | None, fields: list[dict]) -> dict:
        """Form initial data from a label dict whose ``values``/``notes`` hold the codebook's."""
        if not label:
            return super().initial_from(None)
        stored = {**label.get("values", {}), **label.get("notes", {})}
        out = {"exclusion": label["exclusion"], "exclusion_note": label["exclusion_note"]}
        for f in fields:
            if f["key"] in stored:
                out[f"cb_{f['key']}"] = form_value(f, stored[f["key"]])
        return out

    def label_input(self) -> LabelInput:
        """The cleaned data as a :class:`~.services.labels.LabelInput` with ``values``."""
        d = self.cleaned_data
        values = {}
        for field in self.codebook_specs:
            value = d.get(f"cb_{field['key']}")
            if field["type"] == "yes_no" and value in ("1", "0"):
                value = value == "1"
            values[field["key"]] = None if value in ("", None) else value
        return LabelInput(
            identified=False, surface_difference=False, no_difference=False,
            new_tags=[t for t in d.get("new_tags", "").split(",") if t.strip()],
            exclusion=d["exclusion"], exclusion_note=d["exclusion_note"], values=values,
        )

    def label_dict(self) -> dict:
        """The submitted label in the shape of ``label_dict()``: values and notes included."""
        label = self.label_input()
        notes = {f["key"] for f in self.codebook_specs if f["type"] == "note"}
        return {
            "identified": False, "surface_difference": False, "no_difference": False,
            "tags": [], "exclusion": label.exclusion,
            "exclusion_note": label.exclusion_note.strip(),
            "values": {k: v for k, v in label.values.items() if k not in notes},
            "notes": {k: v for k, v in label.values.items() if k in notes and v},
        }


def label_form(study, setting, data, *, codebook, initial_label: dict | None = None,
               initial: dict | None = None) -> LabelForm:
    """The label form for an item of ``setting``: :class:`~.forms.LabelForm` under the default
    codebook, :class:`CodebookLabelForm` under a declared one.

    ``initial_label`` is a stored label dict to start from (the annotator's own, or a final
    label); otherwise ``initial`` (form data, e.g. what annotators agree on) is used.
    """
    if not is_declared(study):
        start = LabelForm.initial_from(initial_label) if initial_label is not None else initial
        return LabelForm(data, codebook=codebook, initial=start)
    fields = item_fields(study, setting)
    if initial_label is not None:
        start = CodebookLabelForm.initial_from_values(initial_label, fields)
    else:
        start = initial if initial is not None else CodebookLabelForm.initial_from(None)
    return CodebookLabelForm(
        data, codebook=codebook, fields=fields, initial=start,
        takes_tags=tags_field_key(study.annotation_codebook) is not None,
    )
