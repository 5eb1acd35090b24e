"""Forms of the researcher team page: add a member, remove a member from a role."""
from __future__ import annotations

from django import forms

from spotlight_study.accounts.roles import ADJUDICATORS, ANNOTATORS
from spotlight_study.studies.models import Study

ROLE_CHOICES = [(ANNOTATORS, "Annotator"), (ADJUDICATORS, "Adjudicator")]


class TeamAddForm(forms.Form):
    """Add a team member: a new account (``existing`` unticked) or an existing user to a role.

    A new account gets a one-time link to set its password, or a generated password when
    ``password`` is ``generate``.
    """

    username = forms.CharField(max_length=150, strip=True)
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=ANNOTATORS)
    email = forms.EmailField(required=False, help_text="Optional.")
    password = forms.ChoiceField(
        choices=[("link", "Give me a one-time link to set a password"), ("generate", "Generate a password")],
        initial="link",
        widget=forms.RadioSelect,
        label="Password",
    )
    existing = forms.BooleanField(
        required=False,
        label="The user already exists: give them this role (no new account)",
    )
    studies = forms.ModelMultipleChoiceField(
        queryset=Study.objects.order_by("slug"),
        to_field_name="slug",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The studies they work on with this role (issue 40); each study's team page "
        "changes this later. With none they see no study yet.",
    )


class TeamRemoveForm(forms.Form):
    """Take user ``user`` out of ``role``; their labels are kept.

    ``confirm`` is set only by the confirmation page's button: without it the view shows that
    page and changes nothing.
    """

    user = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    role = forms.ChoiceField(choices=ROLE_CHOICES, widget=forms.HiddenInput)
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)
