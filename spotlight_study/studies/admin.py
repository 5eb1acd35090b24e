"""Admin for editing study definitions.

Once a real participant has consented (:func:`spotlight_study.studies.freeze.study_freeze_reason`)
everything participants see becomes read-only: the study's texts, conditions, survey and answer
rules, its settings' texts, keys, order and instruction-check keywords, and every token pattern.
What only researchers and annotators use stays editable (status, sample size, timeouts, completion
codes, k, target descriptions and codebooks), so a study can still be paused or annotated.
"""
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.shortcuts import redirect

from .freeze import frozen_message, study_freeze_reason
from .models import Setting, Study, TokenPattern

# Fields participants see, or that decide what they see; frozen with the study.
FROZEN_STUDY_FIELDS = [
    "slug", "title", "consent_text", "instructions_text", "example_answer", "pattern_intro_text",
    "task_prompt", "conditions", "survey", "min_answer_chars", "max_answer_chars",
    "failed_check_policy", "instruction_check_attempts",
]
FROZEN_SETTING_FIELDS = [
    "study", "key", "kind", "position", "title", "group1_texts", "group2_texts", "check_keywords",
]


def _study_of(obj) -> Study | None:
    if isinstance(obj, Study):
        return obj
    if isinstance(obj, Setting):
        return obj.study
    return None


def _freeze_reason(obj) -> str | None:
    study = _study_of(obj)
    return study_freeze_reason(study=study) if study is not None and study.pk else None


class _FreezeAware:
    """Admin mixin: read-only frozen fields, and a message saying why and how to copy."""

    frozen_fields: list[str] = []

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if _freeze_reason(obj):
            readonly += [f for f in self.frozen_fields if f not in readonly]
        return readonly

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        reason = _freeze_reason(obj)
        if reason and request.method == "GET":
            self.message_user(
                request, frozen_message(study=_study_of(obj), reason=reason), messages.WARNING
            )
        return super().change_view(request, object_id, form_url, extra_context)

    def has_delete_permission(self, request, obj=None):
        if _freeze_reason(obj):
            return False
        return super().has_delete_permission(request, obj)

    def delete_view(self, request, object_id, extra_context=None):
        # Django answers a refused delete with a generic 403 ("ask an administrator"), which
        # hides the real reason; say it and go back to the object instead.
        obj = self.get_object(request, object_id)
        reason = _freeze_reason(obj)
        if reason:
            message = frozen_delete_message(study=_study_of(obj), reason=reason)
            self.message_user(request, message, messages.ERROR)
            opts = self.model._meta
            return redirect(f"admin:{opts.app_label}_{opts.model_name}_change", obj.pk)
        return super().delete_view(request, object_id, extra_context)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            _func, name, description = actions["delete_selected"]
            actions["delete_selected"] = (_delete_selected_unless_frozen, name, description)
        return actions


def _delete_selected_unless_frozen(modeladmin, request, queryset):
    """Django's "delete selected" action, refused with the reason if a selected row is frozen
    (Django's own page would only say the account lacks the permission)."""
    frozen = [(obj, reason) for obj in queryset if (reason := _freeze_reason(obj))]
    for obj, reason in frozen:
        modeladmin.message_user(
            request, frozen_delete_message(study=_study_of(obj), reason=reason), messages.ERROR
        )
    if frozen:
        return None
    return delete_selected(modeladmin, request, queryset)


def frozen_delete_message(*, study: Study, reason: str) -> str:
    """Why a frozen study (or one of its settings) cannot be deleted, and what to do instead."""
    return (
        f"Study '{study.slug}' cannot be deleted, nor its settings: {reason} The data of its "
        "participants must be kept with the definition they saw. To stop new arrivals, set its "
        "status to Paused or Closed."
    )


class _FrozenInline:
    """Inline mixin: no adding, deleting or editing rows of a frozen study."""

    frozen_fields: list[str] | None = None  # None: every field

    def _frozen(self, obj) -> bool:
        return bool(_freeze_reason(obj))

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if self._frozen(obj):
            fields = self.frozen_fields
            if fields is None:
                fields = [f.name for f in self.model._meta.fields if f.editable and not f.primary_key]
            readonly += [f for f in fields if f not in readonly]
        return readonly

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


class SettingAdminForm(forms.ModelForm):
    """The setting form; refuses a new setting for a frozen study, with the copy hint."""

    class Meta:
        model = Setting
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        study = cleaned.get("study")
        if self.instance.pk is None and study is not None:
            reason = study_freeze_reason(study=study)
            if reason:
                raise forms.ValidationError(frozen_message(study=study, reason=reason))
        return cleaned


class SettingInline(_FrozenInline, admin.StackedInline):
    model = Setting
    extra = 0
    fields = ["key", "kind", "position", "title", "target_description", "check_keywords"]
    frozen_fields = ["key", "kind", "position", "title", "check_keywords"]
    show_change_link = True


class TokenPatternInline(_FrozenInline, admin.TabularInline):
    model = TokenPattern
    extra = 0


@admin.register(Study)
class StudyAdmin(_FreezeAware, admin.ModelAdmin):
    list_display = ["slug", "title", "status", "target_sample_size", "created_at"]
    list_filter = ["status"]
    search_fields = ["slug", "title"]
    inlines = [SettingInline]
    frozen_fields = FROZEN_STUDY_FIELDS


@admin.register(Setting)
class SettingAdmin(_FreezeAware, admin.ModelAdmin):
    list_display = ["study", "key", "kind", "position", "title"]
    list_filter = ["study", "kind"]
    inlines = [TokenPatternInline]
    frozen_fields = FROZEN_SETTING_FIELDS

    form = SettingAdminForm
