"""Forms of the review page."""
from __future__ import annotations

from django import forms

MAX_CSV_BYTES = 1024 * 1024


class BonusCSVForm(forms.Form):
    """A bonus CSV (``id,amount`` per line, amounts in major units), uploaded or pasted."""

    file = forms.FileField(required=False, help_text="CSV file: id,amount")
    text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="Or paste the lines here."
    )

    def clean(self) -> dict:
        """Exactly one of file and text; the file must be UTF-8 and at most 1 MB."""
        data = super().clean()
        upload, text = data.get("file"), (data.get("text") or "").strip()
        if bool(upload) == bool(text):
            raise forms.ValidationError("Upload a CSV file or paste its lines (one of the two).")
        if upload:
            if upload.size > MAX_CSV_BYTES:
                raise forms.ValidationError("The CSV file is larger than 1 MB.")
            try:
                data["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The CSV file is not UTF-8 text.") from None
        return data

    def csv_text(self) -> str:
        """The CSV text (after ``is_valid()``)."""
        return self.cleaned_data["text"]
