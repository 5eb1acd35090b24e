"""Forms of the review page."""
from __future__ import annotations

from django import forms

from .payloads import REJECTION_CATEGORIES

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


class HeldDecisionForm(forms.Form):
    """The confirmation of one decision on a held submission.

    ``confirm`` must be ticked; ``rejection_category`` and ``message`` (at least 100 characters)
    are checked for a rejection by the service, before anything is sent. For a return the
    message is the reason the participant is given (empty: the neutral default).
    """

    rejection_category = forms.ChoiceField(
        required=False, choices=[("", "Choose Prolific's category")] + [(c, c) for c in REJECTION_CATEGORIES]
    )
    message = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 5}),
        help_text="What the participant reads on Prolific.",
    )
    note = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why, for the record (not sent).",
    )
    confirm = forms.BooleanField(
        required=True, label="I have looked at the evidence and confirm this decision.",
        error_messages={"required": "Tick the confirmation to send the decision."},
    )


class CredentialsForm(forms.Form):
    """The study page's form of the study's own Prolific credentials: a new value replaces the
    stored one, a ticked box clears it, an empty field leaves it as it is. The fields never show
    a stored value (``render_value=False``), and the browser is asked not to fill them."""

    _secret = {"autocomplete": "off", "spellcheck": "false"}
    api_token = forms.CharField(
        required=False, strip=True, label="New API token",
        widget=forms.PasswordInput(render_value=False, attrs=_secret),
    )
    clear_api_token = forms.BooleanField(required=False, label="Remove the study's token")
    webhook_secret = forms.CharField(
        required=False, strip=True, label="New webhook secret",
        widget=forms.PasswordInput(render_value=False, attrs=_secret),
    )
    clear_webhook_secret = forms.BooleanField(required=False, label="Remove the study's webhook secret")

    def clean(self) -> dict:
        """Something to do, and never a new value and its removal together."""
        data = super().clean()
        for kind, what in (("api_token", "token"), ("webhook_secret", "webhook secret")):
            if data.get(kind) and data.get(f"clear_{kind}"):
                raise forms.ValidationError(f"Give a new {what} or remove it, not both. Nothing was changed.")
        if not any(data.get(k) for k in ("api_token", "clear_api_token", "webhook_secret", "clear_webhook_secret")):
            raise forms.ValidationError("Enter a new value or tick a box to remove one. Nothing was changed.")
        return data
