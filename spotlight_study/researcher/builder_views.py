"""The study builder: a study built and edited in the browser, section by section.

A thin editor over a draft's study file (:mod:`spotlight_study.studies.drafts`): each page edits
one section with a server-rendered form (no JavaScript needed), every save stores the draft and
the page then shows, next to each field, what the study file's validation says about it (the
messages of ``import_study``). Publishing, the preview and "Download as file" all go through the
import service. Access: each view has one access check: ``@study_runner_required`` to start a
study, ``@builder_member_required(*RUNNING)`` (:mod:`spotlight_study.studies.access`) for a study's
or a draft's pages.
"""
from __future__ import annotations

import copy
import re

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from spotlight_study.accounts.roles import RUNNING, study_runner_required
from spotlight_study.studies.access import builder_member_required
from spotlight_study.stimuli.selectors import stimulus_set_list, stimulus_set_texts
from spotlight_study.studies.content import pattern_counts
from spotlight_study.studies.design import build_cells
from spotlight_study.studies.drafts import (
    DraftConflict,
    DraftError,
    draft_as_study,
    draft_for_study,
    draft_problems,
    draft_publish,
    draft_save,
    draft_start,
    study_new_version,
)
from spotlight_study.studies.errors import StudyFileError, StudyImportError
from spotlight_study.studies.export import study_file_data, study_file_text
from spotlight_study.studies.freeze import study_freeze_reason
from spotlight_study.studies.languages import SHIPPED_LANGUAGES
from spotlight_study.studies.models import Study, StudyDraft
from spotlight_study.studies.selectors import study_cells
from spotlight_study.researcher.flow_preview import flow_preview_page

from . import builder_forms as bf
from .builder_sections import section_keys, section_of, section_title

_SETTING = re.compile(r"^setting-(\d+)$")


def _edit_url(slug: str, section: str | None = None) -> str:
    if section:
        return reverse("researcher:builder_section", kwargs={"slug": slug, "section": section})
    return reverse("researcher:builder", kwargs={"slug": slug})


def _draft_or_frozen(request: HttpRequest, slug: str) -> StudyDraft | HttpResponse:
    """The draft of ``slug`` (started from the study's file if it has none), or the page saying
    the study is frozen (with "Edit as new version"), or 404."""
    study = Study.objects.filter(slug=slug).first()
    if study is not None:
        reason = study_freeze_reason(study=study)
        if reason:
            return render(request, "researcher/builder/frozen.html", {"study": study, "reason": reason}, status=409)
    draft = StudyDraft.objects.filter(slug=slug).first()
    if draft is not None:
        return draft
    if study is None:
        raise Http404(f"No study or draft with slug '{slug}'.")
    try:
        return draft_for_study(study=study, user=request.user)
    except DraftError as exc:
        messages.error(request, str(exc))
        return redirect("researcher:study_detail", slug=slug)


def _version(request: HttpRequest) -> int | None:
    raw = request.POST.get("version", "")
    return int(raw) if raw.isdigit() else None


@study_runner_required
def builder_new(request: HttpRequest) -> HttpResponse:
    """Start a study: its slug, title and language; then the builder's sections."""
    values = {"slug": "", "title": "", "language": "en"}
    error, field_errors = "", {}
    if request.method == "POST":
        values = {k: request.POST.get(k, "").strip() for k in values}
        try:
            draft = draft_start(user=request.user, **values)
        except DraftError as exc:
            # Each message goes next to the field it is about, which a screen reader then reads
            # with it (aria-describedby); a refusal about no field is shown above the form.
            field_errors = {name: texts[0] for name, texts in exc.fields.items() if name in values}
            error = "" if field_errors else str(exc)
        else:
            messages.success(request, f"Draft '{draft.slug}' started. Fill in each section; every save is kept.")
            return redirect(_edit_url(draft.slug))
    return render(
        request,
        "researcher/builder/new.html",
        {"values": values, "error": error, "field_errors": field_errors,
         "first_invalid": next(iter(field_errors), ""), "languages": SHIPPED_LANGUAGES},
        status=400 if error or field_errors else 200,
    )


def _cells(data: dict) -> list:
    keys = [s.get("key", "") for s in data.get("settings") or [] if isinstance(s, dict)]
    conditions = [c for c in data.get("conditions") or [] if isinstance(c, str)]
    if not keys or not conditions:
        return []
    try:
        return build_cells(keys, conditions)
    except (ValueError, KeyError, ZeroDivisionError):
        return []


@builder_member_required(*RUNNING)
def builder_home(request: HttpRequest, slug: str) -> HttpResponse:
    """The draft's overview: each section with its problems, the cells, and the actions
    (preview, download, publish)."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    problems = draft_problems(draft)
    per_section: dict[str, list[str]] = {}
    for path, msgs in sorted(problems.items()):
        per_section.setdefault(section_of(path, draft.data), []).append(f"{path}: {' '.join(msgs)}")
    sections = [
        {"key": key, "title": section_title(key, draft.data), "problems": per_section.get(key, [])}
        for key in section_keys(draft.data)
    ]
    return render(
        request,
        "researcher/builder/home.html",
        {
            "draft": draft,
            "sections": sections,
            "valid": not problems,
            "problem_count": len(problems),
            "cells": _cells(draft.data),
            "published": Study.objects.filter(slug=slug).exists(),
        },
    )


def _setting_index(section: str, data: dict) -> int | None:
    match = _SETTING.match(section)
    if not match:
        return None
    index = int(match.group(1))
    return index if index < len(data.get("settings") or []) else None


def _stimulus_choices() -> list[tuple[str, str]]:
    return [(str(s.pk), f"{s.title} ({s.n_group1} + {s.n_group2} outputs)") for s in stimulus_set_list()]


def _rows(post, initial: list) -> list | None:
    # A bound formset compares each row with its initial value and drops an unchanged extra row,
    # so the rows are given only to an unbound one (the page's own values are posted back).
    return initial if post is None else None


def _section_forms(section: str, data: dict, post=None, files=None):
    """The forms of ``section`` over ``data`` (bound to ``post`` when given), as a dict."""
    if section == "texts":
        return {"form": bf.StudyTextsForm(post, initial=bf.StudyTextsForm.initial_from(data))}
    if section == "run":
        return {"form": bf.RunForm(post, initial=bf.RunForm.initial_from(data))}
    if section == "conditions":
        return {"form": bf.ConditionsForm(post, initial=bf.ConditionsForm.initial_from(data))}
    if section == "survey":
        survey = data.get("survey") or {}
        return {
            "form": bf.SurveyForm(post, initial=bf.SurveyForm.initial_from(survey)),
            "condition_items": bf.SurveyItemFormSet(post, prefix="ci", initial=_rows(post, [bf.SurveyItemForm.initial_from(i) for i in survey.get("condition_items") or []])),
            "background_items": bf.SurveyItemFormSet(post, prefix="bi", initial=_rows(post, [bf.SurveyItemForm.initial_from(i) for i in survey.get("background_items") or []])),
        }
    if section == "annotation":
        annotation = data.get("annotation") or {}
        fields = (annotation.get("codebook") or {}).get("fields") or []
        return {
            "form": bf.AnnotationForm(post, initial=bf.AnnotationForm.initial_from(annotation)),
            "codebook_fields": bf.CodebookFieldFormSet(post, prefix="cf", initial=_rows(post, [bf.CodebookFieldForm.initial_from(f) for f in fields])),
        }
    if section == "pages":
        return {"form": bf.PagesForm(post, initial=bf.PagesForm.initial_from(data.get("pages")))}
    index = _setting_index(section, data)
    if section == "training" or index is not None:
        base = "training" if index is None else f"settings[{index}]"
        setting = (data.get("training") if index is None else data["settings"][index]) or {}
        key = setting.get("key", "")
        annotation = ((data.get("annotation") or {}).get("settings") or {}).get(key) or {}
        return {
            "form": bf.SettingForm(
                post, files, initial=bf.SettingForm.initial_from(setting, annotation), base=base, setting_key=key,
                training=index is None, stimulus_sets=_stimulus_choices(),
                stimulus_texts=lambda pk, n: stimulus_set_texts(pk=pk, per_group=n),
            ),
            "patterns": bf.PatternFormSet(post, prefix="p", initial=_rows(post, [bf.PatternForm.initial_from(p) for p in setting.get("patterns") or []])),
            "distractors": bf.PatternFormSet(post, prefix="d", initial=_rows(post, [bf.PatternForm.initial_from(p) for p in setting.get("distractor_patterns") or []])) if index is not None else None,
            "setting": setting,
        }
    raise Http404("No such section of the builder.")


def _apply(section: str, data: dict, f: dict) -> dict:
    """A copy of ``data`` with the section's valid forms written into it."""
    data = copy.deepcopy(data)
    form = f["form"]
    if section in ("texts", "run", "conditions", "pages"):
        form.apply(data)
    elif section == "survey":
        ci = [x for x in (r.item() for r in f["condition_items"]) if x]
        bi = [x for x in (r.item() for r in f["background_items"]) if x]
        data["survey"] = form.survey(ci, bi)
    elif section == "annotation":
        form.apply(data, [x for x in (r.field() for r in f["codebook_fields"]) if x])
    else:
        patterns = [x for x in (r.pattern() for r in f["patterns"]) if x]
        distractors = [x for x in (r.pattern() for r in f["distractors"] or []) if x]
        new = form.setting(f["setting"], patterns, distractors)
        index = _setting_index(section, data)
        old_key = f["setting"].get("key")
        if index is None:
            data["training"] = new
        else:
            data["settings"][index] = new
        annotation = dict(data.get("annotation") or {})
        per_setting = dict(annotation.get("settings") or {})
        per_setting.pop(old_key, None)
        entry = form.annotation()
        if entry["tags"] or entry["surface_difference"]:
            per_setting[new["key"]] = entry
        annotation["settings"] = per_setting
        data["annotation"] = annotation
    return data


def _pattern_rows(formset, setting: dict, base: str, kind: str) -> list[dict]:
    """Each pattern row with its path and its live count on the saved texts."""
    rows = []
    for i, row in enumerate(formset or []):
        tokens = bf.words(row["tokens"].value() or "")
        count = None
        if tokens and setting.get("group1") and setting.get("group2"):
            c = pattern_counts(tokens, setting["group1"], setting["group2"])
            count = (f"occurs in {c.count_group1} of {c.n_group1} texts of group 1 / "
                     f"{c.count_group2} of {c.n_group2} texts of group 2")
        rows.append({"form": row, "path": f"{base}.{kind}[{i}]", "count": count})
    return rows


def _attach(section: str, f: dict, problems: dict, data: dict) -> dict[str, list[str]]:
    """Put the problems of this section next to their fields; return the section's others."""
    pairs = [(f["form"], f["form"].paths)]
    base = f["form"].base if isinstance(f["form"], bf.SettingForm) else None
    for name, kind in (("patterns", "patterns"), ("distractors", "distractor_patterns")):
        for i, row in enumerate(f.get(name) or []):
            pairs.append((row, {"tokens": f"{base}.{kind}[{i}]"}))
    for name, where in (("condition_items", "survey.condition_items"), ("background_items", "survey.background_items")):
        for i, row in enumerate(f.get(name) or []):
            pairs.append((row, {**{k: f"{where}[{i}].{k}" for k in ("text", "type", "min", "max", "test")},
                                "choices": f"{where}[{i}].labels", "key": f"{where}[{i}]"}))
    for i, row in enumerate(f.get("codebook_fields") or []):
        where = f"annotation.codebook.fields[{i}]"
        pairs.append((row, {**{k: f"{where}.{k}" for k in ("label", "help", "type", "options", "min", "max", "applies_to")},
                            "optional": f"{where}.required", "key": where}))
    mine = {p: m for p, m in problems.items() if section_of(p, data) == section}
    if section == "survey":  # a likert item's bad labels and a choice item's bad options share a box
        mine = {re.sub(r"(condition_items|background_items)\[(\d+)\]\.options", r"\1[\2].labels", p): m for p, m in mine.items()}
    return bf.attach_problems(mine, pairs)


@builder_member_required(*RUNNING)
def builder_section(request: HttpRequest, slug: str, section: str) -> HttpResponse:
    """One section of the draft: GET shows it with the validation's messages next to their
    fields; POST saves it (refused, with nothing changed, when the draft was saved elsewhere
    since the page was loaded) and comes back to it."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    status, notice = 200, ""
    if request.method == "POST":
        f = _section_forms(section, draft.data, request.POST, request.FILES)
        version = _version(request)
        valid = all(x.is_valid() for k, x in f.items() if k != "setting" and x is not None)
        if version is None:
            status, notice = 400, "The form had no draft version; reload the page. Nothing was saved."
        elif valid:
            try:
                draft = draft_save(slug=slug, data=_apply(section, draft.data, f), version=version, user=request.user)
            except DraftConflict as exc:
                status, notice = 409, str(exc)
            except StudyDraft.DoesNotExist:
                messages.error(request, "This draft no longer exists (published or deleted). Nothing was saved.")
                return redirect("researcher:study_list")
            else:
                messages.success(request, f"Saved (version {draft.version}).")
                return redirect(_edit_url(slug, section))
        else:
            status, notice = 400, "Some input could not be read (see the messages next to the fields). Nothing was saved."
        page_version = version if version is not None else draft.version
    else:
        f = _section_forms(section, draft.data)
        page_version = draft.version
    others = _attach(section, f, draft_problems(draft), draft.data) if request.method == "GET" else {}
    context = {
        "draft": draft,
        "section": section,
        "section_title": section_title(section, draft.data),
        "sections": [(k, section_title(k, draft.data)) for k in section_keys(draft.data)],
        "version": page_version,
        "notice": notice,
        "others": sorted(f"{p}: {' '.join(m)}" for p, m in others.items()),
        "cells": _cells(draft.data) if section == "conditions" else [],
        **f,
    }
    if isinstance(f["form"], bf.SettingForm):
        saved = f["setting"]
        context["pattern_rows"] = _pattern_rows(f["patterns"], saved, f["form"].base, "patterns")
        context["distractor_rows"] = _pattern_rows(f["distractors"], saved, f["form"].base, "distractor_patterns")
        context["is_training"] = section == "training"
    response = render(request, "researcher/builder/section.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@builder_member_required(*RUNNING)
def builder_setting_add(request: HttpRequest, slug: str) -> HttpResponse:
    """Add an empty main setting to the draft (POST, with the page's version) and open it."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    data = copy.deepcopy(draft.data)
    settings = data.get("settings") if isinstance(data.get("settings"), list) else []
    taken = {s.get("key") for s in settings if isinstance(s, dict)}
    key = next(f"setting{n}" for n in range(1, 100) if f"setting{n}" not in taken)
    data["settings"] = [*settings, {"key": key, "title": "", "group1": [], "group2": [], "patterns": [], "distractor_patterns": []}]
    return _save_and_go(request, draft, data, f"setting-{len(settings)}", "Setting added.")


@require_POST
@builder_member_required(*RUNNING)
def builder_setting_remove(request: HttpRequest, slug: str, index: int) -> HttpResponse:
    """Remove main setting ``index`` (POST, with the page's version) and its annotation entry."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    data = copy.deepcopy(draft.data)
    settings = data.get("settings") or []
    if not 0 <= index < len(settings):
        raise Http404("No such setting.")
    removed = settings.pop(index)
    ((data.get("annotation") or {}).get("settings") or {}).pop(removed.get("key"), None)
    return _save_and_go(request, draft, data, None, f"Setting '{removed.get('key')}' removed.")


def _save_and_go(request, draft, data, section, message) -> HttpResponse:
    version = _version(request)
    try:
        if version is None:
            raise DraftConflict("The form had no draft version; reload the page. Nothing was saved.")
        draft_save(slug=draft.slug, data=data, version=version, user=request.user)
    except DraftConflict as exc:
        messages.error(request, str(exc))
        return redirect(_edit_url(draft.slug))
    messages.success(request, message)
    return redirect(_edit_url(draft.slug, section))


@require_POST
@builder_member_required(*RUNNING)
def builder_publish(request: HttpRequest, slug: str) -> HttpResponse:
    """Publish the draft through the import service; on a refusal, the draft's overview with
    the import's messages (nothing changed)."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    version = _version(request)
    try:
        study = draft_publish(slug=slug, version=version if version is not None else -1, user=request.user)
    except DraftConflict as exc:
        messages.error(request, str(exc))
    except StudyFileError as exc:
        messages.error(request, f"Not published: the study file has {len(exc.errors)} problem(s), listed by section below. Nothing was changed.")
    except StudyImportError as exc:
        messages.error(request, f"Not published: {exc} Nothing was changed.")
    else:
        messages.success(request, f"Published: study '{study.slug}' is now defined by this draft (status {study.status}).")
        return redirect("researcher:study_detail", slug=study.slug)
    return redirect(_edit_url(slug))


@builder_member_required(*RUNNING)
def builder_download(request: HttpRequest, slug: str) -> HttpResponse:
    """"Download as file": the study file ``export_study`` writes of the study this draft
    publishes as (made by the import service in a transaction that is rolled back)."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft
    try:
        text = draft_as_study(draft, lambda study: study_file_text(study_file_data(study)))
    except (StudyFileError, StudyImportError):
        messages.error(request, "Not downloaded: the draft would not import yet; its problems are listed by section below.")
        return redirect(_edit_url(slug))
    response = HttpResponse(text.encode("utf-8"), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}.yaml"'
    response["Cache-Control"] = "no-store"
    return response


@builder_member_required(*RUNNING)
def builder_preview(request: HttpRequest, slug: str, cell: int | None = None, page: str | None = None) -> HttpResponse:
    """The researcher preview (:func:`.flow_preview.flow_preview_page`) of the study this draft publishes as:
    the list of cells, or one page of one cell. Records nothing."""
    draft = _draft_or_frozen(request, slug)
    if isinstance(draft, HttpResponse):
        return draft

    def show(study: Study) -> HttpResponse:
        if cell is None:
            return render(request, "researcher/preview_index.html",
                          {"study": study, "cells": study_cells(study), "builder": True})
        return flow_preview_page(
            request, study, cell=cell, page=page,
            home_url=reverse("researcher:builder_preview", kwargs={"slug": slug}),
            page_url_name="researcher:builder_preview_page",
        )

    try:
        return draft_as_study(draft, show)
    except (StudyFileError, StudyImportError):
        messages.error(request, "No preview yet: the draft would not import; its problems are listed by section below.")
        return redirect(_edit_url(slug))


@require_POST
@builder_member_required(*RUNNING)
def builder_new_version(request: HttpRequest, slug: str) -> HttpResponse:
    """"Edit as new version": copy the study under a new slug (``import_study --as-slug``) in
    one click and open the copy in the builder."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise Http404(f"No study with slug '{slug}'.")
    try:
        draft = study_new_version(study=study, new_slug=request.POST.get("new_slug", ""), user=request.user)
    except (DraftError, StudyFileError, StudyImportError) as exc:
        messages.error(request, f"No copy made: {exc}")
        return redirect("researcher:study_detail", slug=slug)
    messages.success(request, f"Copied '{slug}' as '{draft.slug}' (status draft). You are editing the copy.")
    return redirect(_edit_url(draft.slug))


@require_POST
@builder_member_required(*RUNNING)
def builder_pattern_check(request: HttpRequest, slug: str) -> JsonResponse:
    """The live count of a pattern on the texts typed so far (the builder page's script):
    ``{"count": "occurs in k of n texts of group 1 / m of n texts of group 2"}``."""
    fmt = request.POST.get("text_format", "lines")
    group1 = bf.texts_from(request.POST.get("group1", ""), fmt)[:200]
    group2 = bf.texts_from(request.POST.get("group2", ""), fmt)[:200]
    tokens = bf.words(request.POST.get("tokens", ""))[:20]
    if not tokens or not group1 or not group2:
        return JsonResponse({"count": ""})
    c = pattern_counts(tokens, group1, group2)
    return JsonResponse({"count": f"occurs in {c.count_group1} of {c.n_group1} texts of group 1 / "
                                  f"{c.count_group2} of {c.n_group2} texts of group 2"})
