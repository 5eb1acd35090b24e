"""Researcher pages (staff and the ``researchers`` group; other logged-in users get 403).

The preview walks the flow with GET links and records nothing.
"""
from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from spotlight_study.annotation.roles import (
    is_adjudicator,
    is_annotator,
    is_researcher,
    researcher_required,
)
from spotlight_study.participation.forms import AnswerForm, ConsentForm, StepForm, SurveyForm
from spotlight_study.participation.selectors import study_dashboard, task_page
from spotlight_study.researcher.services import latest_report_dir
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import (
    setting_for_key,
    study_cells,
    study_get_with_settings,
    study_list as select_studies,
    training_setting,
)


def _study(slug: str) -> Study:
    try:
        return study_get_with_settings(slug=slug)
    except Study.DoesNotExist:
        raise Http404("No such study.") from None


def study_list(request: HttpRequest) -> HttpResponse:
    """All studies with links to their pages.

    This is where everyone lands after logging in, so annotators and adjudicators who are not
    researchers are sent on to their annotation home.
    """
    user = request.user
    other_role = is_annotator(user) or is_adjudicator(user)
    if user.is_authenticated and not is_researcher(user) and other_role:
        return redirect("annotation:home")
    return _study_list(request)


@researcher_required
def _study_list(request: HttpRequest) -> HttpResponse:
    return render(request, "researcher/study_list.html", {"studies": select_studies()})


@researcher_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Participants per cell, median time per task and flags, live from the database."""
    study = _study(slug)
    entry = request.build_absolute_uri(reverse("participation:entry", kwargs={"slug": slug}))
    prolific_link = (
        f"{entry}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        f"&SESSION_ID={{{{%SESSION_ID%}}}}"
    )
    return render(
        request,
        "researcher/study_detail.html",
        {"study": study, "dash": study_dashboard(study=study), "prolific_link": prolific_link},
    )


@researcher_required
def latest_report(request: HttpRequest, slug: str) -> HttpResponse:
    """The latest analysis report of the study (written by ``manage.py analyze``)."""
    study = _study(slug)
    path = latest_report_dir(study) / "report.html"
    if not path.exists():
        return render(request, "researcher/no_report.html", {"study": study}, status=404)
    response = FileResponse(path.open("rb"), content_type="text/html; charset=utf-8")
    # The report embeds its own figures; keep it from loading anything else.
    response["Content-Security-Policy"] = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    return response


def _pages(n_tasks: int) -> list[str]:
    return ["consent", "instructions", "training"] + [f"task-{i}" for i in range(1, n_tasks + 1)] + [
        "survey",
        "done",
    ]


@researcher_required
def preview_index(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's cells, each with a link to walk its flow."""
    study = _study(slug)
    return render(request, "researcher/preview_index.html", {"study": study, "cells": study_cells(study)})


@researcher_required
def preview_page(request: HttpRequest, slug: str, cell: int, page: str) -> HttpResponse:
    """One page of the flow as a participant in ``cell`` would see it. Records nothing."""
    study = _study(slug)
    cells = study_cells(study)
    if not 0 <= cell < len(cells):
        raise Http404("No such cell.")
    the_cell = cells[cell]
    pages = _pages(len(the_cell.tasks))
    if page not in pages:
        raise Http404("No such page.")
    following = pages[pages.index(page) + 1] if page != "done" else None
    ctx = {
        "study": study,
        "preview": True,
        "cell": the_cell,
        "preview_home": reverse("researcher:preview", kwargs={"slug": slug}),
        "form_method": "get",
        "form_action": reverse(
            "researcher:preview_page", kwargs={"slug": slug, "cell": cell, "page": following}
        )
        if following
        else "",
    }
    if page == "consent":
        ctx["form"] = ConsentForm()
        return render(request, "participation/consent.html", ctx)
    if page == "instructions":
        ctx.update(
            form=StepForm(),
            page=task_page(setting=training_setting(study), condition="no_pattern", shuffle_seed=0),
        )
        return render(request, "participation/instructions.html", ctx)
    if page == "training" or page.startswith("task-"):
        if page == "training":
            setting, condition, position = training_setting(study), "pattern", 0
        else:
            position = int(page.split("-")[1])
            task = the_cell.tasks[position - 1]
            setting, condition = setting_for_key(study, task.setting), task.condition
        ctx.update(
            form=AnswerForm(max_chars=study.max_answer_chars),
            page=task_page(setting=setting, condition=condition, shuffle_seed=0),
            position=position,
            n_tasks=len(the_cell.tasks),
            is_training=position == 0,
        )
        return render(request, "participation/task.html", ctx)
    if page == "survey":
        conditions = list(dict.fromkeys(t.condition for t in the_cell.tasks))
        ctx["form"] = SurveyForm(survey=study.survey, conditions=conditions)
        return render(request, "participation/survey.html", ctx)
    ctx.update(participant={"status": "completed"}, code=study.completion_code, completion_url=None)
    return render(request, "participation/done.html", ctx)
