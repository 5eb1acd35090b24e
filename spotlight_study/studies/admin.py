"""Admin of study definitions: read-only, but for the fields a study is run and annotated with.

The study file's validation (:mod:`.schema`) is the only gate of a definition (issue 35): the
admin's raw JSON boxes for the survey, conditions, groups, tokens and tags went around it, and a
broken survey reached participants. So every part of a definition is shown read-only here, with
the way to change it (``export_study``, edit the file, ``import_study --replace``, or
``--as-slug`` for a new version), and no study, setting or pattern is added or (but for a whole
study) deleted here. What stays editable is what a researcher runs or annotates a study with:
status, sample size and stop-at-target, the times, completion codes, k and the reservation
timeout; a setting's target description, codebook tags and surface difference. Each edit is
checked by the study file's validation with the import's own messages
(:mod:`.definition_edit`), and saved as the import would store it.

Once a real participant has consented (:func:`spotlight_study.studies.freeze.study_freeze_reason`)
the study and its settings cannot be deleted either; the change page says why and how to copy.
"""
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.shortcuts import redirect
from django.utils.html import format_html

from .definition_edit import (
    SETTING_FIELDS,
    STUDY_FIELD_PATHS,
    Path,
    definition_edit_check,
    field_for_problem,
    setting_field_paths,
)
from .export import study_file_data
from .freeze import frozen_message, study_freeze_reason
from spotlight_study.accounts.readonly_admin import ReadOnlyAdmin

from .models import Setting, Study, StudyMember, TokenPattern

#: Shown above a definition's read-only fields: how to change them.
HOW_TO_CHANGE = (
    "Read-only here: a definition changes only through its study file, whose checks guard "
    "every way in. Edit it in the study builder (<a href=\"{builder}\">Edit in the builder</a>"
    ", the same checks), or download the study file (<code>manage.py export_study {slug} --out FILE</code>"
    ", or <a href=\"{download}\">Download study file</a>), edit it and import it again with "
    "<code>manage.py import_study FILE --replace</code> (before anyone consented; add "
    "<code>--dry-run</code> to see the changes first) or <code>--as-slug NEW-SLUG</code> for a "
    "new version. See docs/study-file.md."
)


def _study_of(obj) -> Study | None:
    if isinstance(obj, Study):
        return obj
    if isinstance(obj, Setting):
        return obj.study
    return None


def _freeze_reason(obj) -> str | None:
    study = _study_of(obj)
    return study_freeze_reason(study=study) if study is not None and study.pk else None


def _how_to_change(obj) -> str:
    study = _study_of(obj)
    if study is None:
        return ""
    return format_html(
        HOW_TO_CHANGE.replace("{builder}", "{}").replace("{slug}", "{}").replace("{download}", "{}"),
        f"/researcher/{study.slug}/edit/",
        study.slug,
        f"/researcher/{study.slug}/study-file.yaml",
    )


def _editable_fields(model, editable: list[str]) -> tuple[list[str], list[str]]:
    """``(editable, read_only)``: the model's form fields split by ``editable``, model order."""
    names = [f.name for f in model._meta.fields if f.editable and not f.primary_key]
    return [n for n in names if n in editable], [n for n in names if n not in editable]


class _SchemaCheckedForm(forms.ModelForm):
    """A change form whose edits go through the study file's validation
    (:func:`.definition_edit.definition_edit_check`): refused with its messages next to the
    field, saved as the import would store them."""

    def _field_paths(self, study: Study) -> dict[str, Path]:
        raise NotImplementedError

    def _study(self) -> Study:
        raise NotImplementedError

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None:
            return cleaned
        study = self._study()
        paths = self._field_paths(study)
        edits = {
            # A JSON box gives a str subclass (JSONString); the validation names plain types.
            paths[name]: str(cleaned[name]) if isinstance(cleaned[name], str) else cleaned[name]
            for name in self.changed_data
            if name in paths and name in cleaned
        }
        if not edits:
            return cleaned
        outcome = definition_edit_check(study=study, edits=edits)
        self._schema_refused = bool(outcome.problems)
        for where, problems in sorted(outcome.problems.items()):
            name = field_for_problem(where, paths)
            for problem in problems:
                if name in self.fields:
                    self.add_error(name, problem)
                else:
                    self.add_error(None, f"{where}: {problem}")
        if not outcome.problems:
            by_path = {path: name for name, path in paths.items()}
            for path, value in outcome.values.items():
                cleaned[by_path[path]] = value
        return cleaned

    def _post_clean(self):
        # Once the study file's validation refused the edit, the model's own rules (Study.clean)
        # would only repeat it in other words: the import's messages are the ones shown.
        if getattr(self, "_schema_refused", False):
            return
        super()._post_clean()


class StudyAdminForm(_SchemaCheckedForm):
    """The study's editable fields (:data:`.definition_edit.STUDY_FIELD_PATHS`)."""

    class Meta:
        model = Study
        fields = list(STUDY_FIELD_PATHS)

    def _study(self) -> Study:
        return Study.objects.get(pk=self.instance.pk)

    def _field_paths(self, study: Study) -> dict[str, Path]:
        return dict(STUDY_FIELD_PATHS)


class SettingAdminForm(_SchemaCheckedForm):
    """A setting's editable fields (:data:`.definition_edit.SETTING_FIELDS`)."""

    class Meta:
        model = Setting
        fields = list(SETTING_FIELDS)

    def _study(self) -> Study:
        return Study.objects.get(pk=self.instance.study_id)

    def _field_paths(self, study: Study) -> dict[str, Path]:
        return setting_field_paths(self.instance, study_file_data(study))


class _DefinitionAdmin:
    """Admin mixin: the definition read-only (with how to change it), nothing added here, a
    frozen study's rows not deleted (with why), and a message on a frozen study's page."""

    editable: list[str] = []

    def has_add_permission(self, request):
        return False

    def get_readonly_fields(self, request, obj=None):
        return _editable_fields(self.model, self.editable)[1]

    def get_fieldsets(self, request, obj=None):
        editable, read_only = _editable_fields(self.model, self.editable)
        return [
            (None, {"fields": editable}),
            ("Definition", {"fields": read_only, "description": _how_to_change(obj)}),
        ]

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


class _ReadOnlyInline:
    """Inline mixin: the rows shown, none added, changed or deleted here."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields if f.editable and not f.primary_key]

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SettingInline(_ReadOnlyInline, admin.StackedInline):
    model = Setting
    fields = ["key", "kind", "position", "title", "target_description", "check_keywords"]
    show_change_link = True


class TokenPatternInline(_ReadOnlyInline, admin.TabularInline):
    model = TokenPattern
    fields = ["tokens", "group", "is_distractor", "position", "unchecked_reason"]


@admin.register(Study)
class StudyAdmin(_DefinitionAdmin, admin.ModelAdmin):
    list_display = ["slug", "title", "status", "target_sample_size", "created_at"]
    list_filter = ["status"]
    search_fields = ["slug", "title"]
    inlines = [SettingInline]
    form = StudyAdminForm
    editable = list(STUDY_FIELD_PATHS)


@admin.register(Setting)
class SettingAdmin(_DefinitionAdmin, admin.ModelAdmin):
    list_display = ["study", "key", "kind", "position", "title"]
    list_filter = ["study", "kind"]
    inlines = [TokenPatternInline]
    form = SettingAdminForm
    editable = list(SETTING_FIELDS)

    # A setting goes with its study file: deleting one here could leave a study without its
    # training or its only main setting. The permission itself stays (deleting a whole study
    # deletes its settings, and Django asks this admin whether it may); the delete page and
    # action are refused instead.

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_delete": False}
        return super().change_view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        if obj is None:
            return super().delete_view(request, object_id, extra_context)
        self.message_user(
            request,
            f"A setting is not deleted here: remove it from the study file of '{obj.study.slug}' "
            "and import that with `import_study FILE --replace --drop-missing`.",
            messages.ERROR,
        )
        return redirect("admin:studies_setting_change", obj.pk)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(StudyMember)
class StudyMemberAdmin(ReadOnlyAdmin):
    """Who holds which role on which study. Read-only: the team page and ``manage.py
    study_members`` change it, so that every change is in the audit trail."""

    list_display = ["study", "user", "role", "added_at"]
    list_filter = ["role", "study"]
    search_fields = ["user__username", "study__slug"]
