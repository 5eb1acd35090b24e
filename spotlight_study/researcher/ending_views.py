"""The monitor's ending of stalled participants: a confirmation page, then the ending.

``GET /researcher/<slug>/monitor/end/?participant=<pseudonym>`` (one participant) or
``?idle=<minutes>[&pilot=...]`` (every participant in progress the monitor's idle filter shows)
lists who would be ended; its form posts exactly those pseudonyms with the reason, so what the
researcher confirmed is what is ended (a participant who finished meanwhile is skipped and
named). The ending is :func:`~spotlight_study.participation.ending.participants_end`; the
optional Prolific message goes through the messages service (template ``ended``).
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import ngettext

from spotlight_study.accounts.roles import RUNNING
from spotlight_study.participation.ending import (
    ending_message_recorded,
    participants_end,
    participants_in_progress,
)
from spotlight_study.participation.errors import EndingRefused
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.messages import message_send
from spotlight_study.researcher.forms import EndParticipantsForm, MonitorFilterForm
from spotlight_study.researcher.monitor import PILOT_EXCLUDE, PILOT_ONLY, duration_display
from spotlight_study.studies.access import study_member_required


def _chosen(request: HttpRequest, study) -> tuple[list, str, str]:
    """``(participants in progress to confirm, what chose them, the monitor's query)`` from the
    GET: one ``participant``, or the ``idle`` filter with the ``pilot`` one."""
    pseudonym = request.GET.get("participant", "").strip()
    if pseudonym:
        people = [s for s in participants_in_progress(study=study, pilot=None) if s.pseudonym == pseudonym]
        return people, f"participant {pseudonym}", ""
    form = MonitorFilterForm(request.GET)
    if not form.is_valid() or form.filters().idle_minutes is None:
        return [], "", ""
    filters = form.filters()
    pilot = {PILOT_EXCLUDE: False, PILOT_ONLY: True}.get(filters.pilot)
    people = participants_in_progress(study=study, idle_minutes=filters.idle_minutes, pilot=pilot)
    query = urlencode({"idle": filters.idle_minutes, "pilot": filters.pilot, "status": "in_progress"})
    minutes = ngettext("%(n)d minute", "%(n)d minutes", filters.idle_minutes) % {"n": filters.idle_minutes}
    return people, f"every participant in progress idle for more than {minutes}", query


@study_member_required(*RUNNING)
def monitor_end(request: HttpRequest, slug: str) -> HttpResponse:
    """Confirm (GET) and end (POST) stalled participants of the study; see the module."""
    study = request.study
    monitor_url = reverse("researcher:monitor", args=[slug])
    if request.method == "POST":
        return _end(request, study, monitor_url)
    people, chosen_by, query = _chosen(request, study)
    if not people:
        messages.error(request, "Nobody to end: no participant in progress matches. Nothing was changed.")
        return redirect(monitor_url)
    return _confirm_page(request, study, people, chosen_by, EndParticipantsForm(), monitor_url, query)


def _confirm_page(request, study, people, chosen_by, form, monitor_url, query, status=200):
    rows = [(s, duration_display(s.idle_seconds)) for s in people]
    return render(request, "researcher/monitor_end.html", {
        "study": study, "rows": rows, "chosen_by": chosen_by, "form": form,
        "monitor_url": f"{monitor_url}?{query}" if query else monitor_url, "query": query,
        "can_message": bool(getattr(getattr(study, "prolific", None), "prolific_id", "")),
    }, status=status)


def _monitor_query(raw: str) -> str:
    """The monitor's filters from a posted query string, re-encoded: only its own parameters,
    so a crafted value can neither leave the monitor nor break the redirect."""
    given = QueryDict(raw[:500])
    return urlencode([(k, given[k]) for k in ("status", "flag", "pilot", "idle") if given.get(k)])


def _end(request: HttpRequest, study, monitor_url: str) -> HttpResponse:
    form = EndParticipantsForm(request.POST)
    query = _monitor_query(request.POST.get("query", ""))
    pseudonyms = form.pseudonyms()
    back = f"{monitor_url}?{query}" if query else monitor_url
    if not form.is_valid():
        people = [
            s for s in participants_in_progress(study=study, pilot=None) if s.pseudonym in set(pseudonyms)
        ]
        if not people:
            messages.error(request, "Nobody to end: no participant in progress matches. Nothing was changed.")
            return redirect(back)
        return _confirm_page(request, study, people, f"{len(people)} participant(s)", form, monitor_url,
                             query, status=400)
    try:
        report = participants_end(
            study=study, pseudonyms=pseudonyms, reason=form.cleaned_data["reason"],
            ended_by=request.user, via="monitor",
        )
    except EndingRefused as exc:
        messages.error(request, str(exc))
        return redirect(back)
    text = f"Ended {len(report.ended)} participant(s); their places are free."
    if report.skipped:
        text += " Not ended: " + "; ".join(f"{p} ({why})" for p, why in report.skipped) + "."
    messages.success(request, text)
    if form.cleaned_data["send_message"] and report.ended:
        _message(request, study, report)
    return redirect(back)


def _message(request: HttpRequest, study, report) -> None:
    """Send each ended participant the ``ended`` message through Prolific (one message each:
    the messages service names one participant or a status group) and note it on the
    decision; a failure is said, the ending stays."""
    ps = getattr(study, "prolific", None)
    if ps is None or not ps.prolific_id:
        messages.warning(request, "The study is not on Prolific: no message was sent.")
        return
    failed = 0
    for pseudonym, ending in zip(report.ended, report.endings):
        try:
            sent = message_send(prolific_study_id=ps.pk, template="ended", pseudonym=pseudonym,
                                sent_by=request.user)
        except (ProlificServiceError, ProlificError):
            failed += 1
            continue
        ending_message_recorded(endings=[ending], message_id=sent.pk)
        failed += sent.outcome != sent.Outcome.DONE
    if failed:
        messages.warning(request, f"The Prolific message to {failed} participant(s) failed; see the messages log.")
    else:
        messages.info(request, f"Prolific message sent to {len(report.ended)} participant(s).")
