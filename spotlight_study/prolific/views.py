"""The Prolific webhook and the researcher's review pages: thin wrappers around services.

The webhook (``POST /prolific/webhook/``) answers 401 to a bad signature, 400 to a stale or
malformed request, 503 while no secret is configured, and 200 otherwise (also for a duplicate
event, so that Prolific stops redelivering it).
"""
from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from spotlight_study.annotation.roles import researcher_required
from spotlight_study.studies.models import Study

from . import selectors, services, webhooks
from .client import ProlificError
from .forms import BonusCSVForm
from .models import BonusPayment


@csrf_exempt
@require_POST
def webhook(request: HttpRequest) -> HttpResponse:
    """Receive a Prolific webhook: verify, reject stale, deduplicate, apply."""
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    if not secret:
        return JsonResponse({"detail": "The webhook secret is not configured."}, status=503)
    timestamp = request.headers.get(webhooks.TIMESTAMP_HEADER, "")
    if not webhooks.signature_valid(
        secret=secret,
        timestamp=timestamp,
        body=request.body,
        signature_header=request.headers.get(webhooks.SIGNATURE_HEADER, ""),
    ):
        return JsonResponse({"detail": "Invalid signature."}, status=401)
    sent = webhooks.timestamp_fresh(
        value=timestamp, now=timezone.now(), tolerance_seconds=settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS
    )
    if sent is None:
        return JsonResponse({"detail": "Stale or invalid timestamp."}, status=400)
    try:
        payload = json.loads(request.body)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        return JsonResponse({"detail": "The body must be a JSON object."}, status=400)
    event_id = request.headers.get(webhooks.EVENT_ID_HEADER, "").strip()[:100] or (
        "sha256:" + hashlib.sha256(timestamp.encode() + request.body).hexdigest()
    )
    event_time = webhooks.timestamp_parse(request.headers.get(webhooks.EVENT_TIMESTAMP_HEADER, "")) or sent
    event, created = services.webhook_event_receive(
        event_id=event_id,
        event_type=str(payload.get("event_type") or ""),
        payload=payload,
        sent_at=event_time,
    )
    return JsonResponse({"event": event.event_id, "duplicate": not created, "outcome": event.outcome})


# --- review pages (researchers) -----------------------------------------------------------


def _study(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise Http404("No such study.")
    return study


def _linked_or_redirect(request: HttpRequest, study: Study):
    ps = selectors.prolific_study_for(study)
    if ps is None or not ps.prolific_id:
        messages.error(
            request,
            "This study is not on Prolific yet: create it with "
            f"`manage.py prolific_study {study.slug} create` or link it with `... link ID`.",
        )
        return None
    return ps


@researcher_required
def review(request: HttpRequest, slug: str) -> HttpResponse:
    """Submission statuses, bulk approval, failed checks and bonuses of one study."""
    study = _study(slug)
    summary = selectors.review_summary(study)
    ps = summary["prolific"]
    return render(
        request,
        "prolific/review.html",
        {
            "study": study,
            "summary": summary,
            "rows": selectors.submission_rows(ps) if ps else [],
            "bonus_form": BonusCSVForm(),
        },
    )


def _run(request: HttpRequest, slug: str, action) -> HttpResponse:
    study = _study(slug)
    ps = _linked_or_redirect(request, study)
    if ps is not None:
        try:
            messages.success(request, action(ps))
        except (services.ProlificServiceError, ProlificError, ValidationError) as exc:
            messages.error(request, str(exc))
    return redirect("prolific:review", slug=slug)


@researcher_required
@require_POST
def sync(request: HttpRequest, slug: str) -> HttpResponse:
    """Pull submission statuses from Prolific now."""

    def action(ps):
        r = services.submissions_sync(prolific_study_id=ps.pk)
        return (
            f"Synced {r.fetched} submission(s): {r.created} new, {r.changed} changed, "
            f"{r.freed} place(s) freed."
        )

    return _run(request, slug, action)


@researcher_required
@require_POST
def approve(request: HttpRequest, slug: str) -> HttpResponse:
    """Approve the completed submissions in bulk."""

    def action(ps):
        r = services.submissions_approve_completed(prolific_study_id=ps.pk)
        return f"Approved {r.done} of {r.selected} submission(s) in {r.api_calls} request(s)."

    return _run(request, slug, action)


@researcher_required
@require_POST
def failed_checks(request: HttpRequest, slug: str) -> HttpResponse:
    """Ask to return (or reject, per the study's setting) the failed instruction checks."""

    def action(ps):
        r = services.submissions_review_failed_checks(prolific_study_id=ps.pk)
        if r.errors:
            raise services.ProlificServiceError(
                f"{r.done} of {r.selected} done, then: {r.errors[0]}"
            )
        if r.action == "manual":
            return f"{r.selected} submission(s) left for manual review on Prolific."
        return f"{r.action.replace('_', ' ').capitalize()}: {r.done} of {r.selected} submission(s)."

    return _run(request, slug, action)


@researcher_required
@require_POST
def bonus_draft(request: HttpRequest, slug: str) -> HttpResponse:
    """Check a bonus CSV and show the dry run (nothing is sent)."""
    study = _study(slug)
    ps = _linked_or_redirect(request, study)
    if ps is None:
        return redirect("prolific:review", slug=slug)
    form = BonusCSVForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(m for ms in form.errors.values() for m in ms))
        return redirect("prolific:review", slug=slug)
    try:
        payment = services.bonus_payment_draft(
            prolific_study_id=ps.pk, csv_text=form.csv_text(), created_by=request.user
        )
    except services.ProlificServiceError as exc:
        messages.error(request, str(exc))
        return redirect("prolific:review", slug=slug)
    return redirect("prolific:bonus", slug=slug, pk=payment.pk)


@researcher_required
def bonus(request: HttpRequest, slug: str, pk: str) -> HttpResponse:
    """One bonus payment: its lines, total and status; a draft has the button to pay."""
    study = _study(slug)
    pk = int(pk)
    payment = BonusPayment.objects.filter(pk=pk, prolific_study__study=study).first()
    if payment is None:
        raise Http404("No such bonus payment.")
    return render(request, "prolific/bonus.html", {"study": study, "payment": payment})


@researcher_required
@require_POST
def bonus_pay(request: HttpRequest, slug: str, pk: str) -> HttpResponse:
    """Set up and pay a drafted bonus payment, once."""
    study = _study(slug)
    pk = int(pk)
    if not BonusPayment.objects.filter(pk=pk, prolific_study__study=study).exists():
        raise Http404("No such bonus payment.")
    try:
        payment = services.bonus_payment_pay(bonus_payment_id=pk)
        messages.success(request, f"Bonus payment {payment.pk} paid: {payment.total_minor_units / 100:.2f} in bonuses.")
    except (services.ProlificServiceError, ProlificError) as exc:
        messages.error(request, str(exc))
    return redirect("prolific:bonus", slug=slug, pk=pk)
