"""The Prolific webhook and the researcher's review pages: thin wrappers around services.

The webhook (``POST /prolific/webhook/``) answers, in this order of checks:

- 503 while no secret is configured (Prolific retries later);
- 413 to a body larger than ``webhooks.MAX_BODY_BYTES`` (64 KiB), before it is read;
- 401 to a bad signature, checked over the raw body before anything parses it;
- 400 to a stale timestamp, or a signed body that is not a JSON object (or nests deeper than
  ``webhooks.MAX_JSON_DEPTH``) or has no ``event_type``: such a request will never succeed;
- 200 otherwise, also for a duplicate event and for an event with an unknown status, so that
  Prolific stops redelivering it. NUL characters and lone surrogates in a signed event are
  removed before it is stored (the same on SQLite and PostgreSQL), and the event is applied.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from spotlight_study.accounts.roles import OWNING, RUNNING
from spotlight_study.studies.access import study_member_required
from spotlight_study.studies.models import Study

from . import selectors, webhooks
from .credentials import KINDS, study_webhook_secret
from .errors import ProlificError, ProlificServiceError, WebhookEventInvalid
from .forms import BonusCSVForm, CredentialsForm, HeldDecisionForm
from .models import BonusPayment, ReviewDecision
from .services.credentials import credentials_clear, credentials_save
from .services.bonuses import bonus_payment_draft, bonus_payment_pay
from .services.demographics import demographics_fetch
from .services.messages import message_send
from .services.review import HELD_RETURN_REASON, ReviewReport, held_submission_decide
from .services.submissions import submissions_sync
from .services.webhook import webhook_event_receive


@csrf_exempt
@require_POST
def webhook(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """Receive a Prolific webhook: verify, reject stale, deduplicate, apply.

    ``/prolific/webhook/`` is verified with ``PROLIFIC_WEBHOOK_SECRET`` and changes only the
    studies without a webhook secret of their own; ``/prolific/webhook/<slug>/`` is verified
    with that study's secret in force (its own, else the instance's) and changes that study only
    (:func:`~.services.webhook.webhook_scope`). An unknown slug is a 404.
    """
    scope_study_id = None
    if slug is None:
        secret = settings.PROLIFIC_WEBHOOK_SECRET
    else:
        scope_study_id = Study.objects.filter(slug=slug).values_list("pk", flat=True).first()
        if scope_study_id is None:
            return JsonResponse({"detail": "No such study."}, status=404)
        try:
            secret = study_webhook_secret(scope_study_id)
        except ProlificError:
            # Stored but not decryptable here: refuse until the key is back (Prolific retries).
            return JsonResponse({"detail": "The study's webhook secret cannot be read."}, status=503)
    if not secret:
        return JsonResponse({"detail": "The webhook secret is not configured."}, status=503)
    too_large = JsonResponse(
        {"detail": f"The body is larger than {webhooks.MAX_BODY_BYTES} bytes."}, status=413
    )
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > webhooks.MAX_BODY_BYTES:
        return too_large
    body = request.body
    if len(body) > webhooks.MAX_BODY_BYTES:
        return too_large
    timestamp = request.headers.get(webhooks.TIMESTAMP_HEADER, "")
    if not webhooks.signature_valid(
        secret=secret,
        timestamp=timestamp,
        body=body,
        signature_header=request.headers.get(webhooks.SIGNATURE_HEADER, ""),
    ):
        return JsonResponse({"detail": "Invalid signature."}, status=401)
    sent = webhooks.timestamp_fresh(
        value=timestamp, now=timezone.now(), tolerance_seconds=settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS
    )
    if sent is None:
        return JsonResponse({"detail": "Stale or invalid timestamp."}, status=400)
    try:
        payload = webhooks.payload_parse(body)
    except webhooks.UnstorableNumber as exc:
        return JsonResponse({"detail": f"The body has a number no database stores: {exc}."}, status=400)
    if payload is None:
        return JsonResponse({"detail": "The body must be a JSON object."}, status=400)
    event_id = webhooks.strip_unstorable(request.headers.get(webhooks.EVENT_ID_HEADER, "")).strip()[:100]
    event_id = event_id or "sha256:" + hashlib.sha256(timestamp.encode() + body).hexdigest()
    event_time = webhooks.timestamp_parse(request.headers.get(webhooks.EVENT_TIMESTAMP_HEADER, "")) or sent
    try:
        event, created = webhook_event_receive(
            event_id=event_id,
            event_type=str(payload.get("event_type") or ""),
            payload=payload,
            sent_at=event_time,
            scope_study_id=scope_study_id,
        )
    except WebhookEventInvalid as exc:
        return JsonResponse({"detail": str(exc)}, status=400)
    return JsonResponse({"event": event.event_id, "duplicate": not created, "outcome": event.outcome})


#: "API token", "webhook secret" by kind, for the page's messages.
CREDENTIAL_WORDS = {kind: what for kind, (what, _variable) in KINDS.items()}


# --- review pages (researchers) -----------------------------------------------------------


def _linked_or_redirect(request: HttpRequest, study: Study):
    ps = selectors.prolific_study_for(study)
    if ps is None or not ps.prolific_id:
        messages.error(
            request,
            "This study is not on Prolific yet: create it with "
            f"manage.py prolific_study {study.slug} create, or link it with "
            f"manage.py prolific_study {study.slug} link <Prolific study ID>.",
        )
        return None
    return ps


@study_member_required(*RUNNING)
def review(request: HttpRequest, slug: str) -> HttpResponse:
    """Submission statuses, bulk approval, failed checks and bonuses of one study."""
    study = request.study
    summary = selectors.review_summary(study)
    ps = summary["prolific"]
    return render(
        request,
        "prolific/review.html",
        {
            "study": study,
            "summary": summary,
            "rows": selectors.submission_rows(ps) if ps else [],
            "disagreements": selectors.status_disagreements(prolific_study=ps) if ps else [],
            "bonus_form": BonusCSVForm(),
        },
    )


def _run(request: HttpRequest, slug: str, action) -> HttpResponse:
    study = request.study
    ps = _linked_or_redirect(request, study)
    if ps is not None:
        try:
            messages.success(request, action(ps))
        except (ProlificServiceError, ProlificError, ValidationError) as exc:
            messages.error(request, str(exc))
    return redirect("prolific:review", slug=slug)


@study_member_required(*RUNNING)
@require_POST
def sync(request: HttpRequest, slug: str) -> HttpResponse:
    """Pull submission statuses from Prolific now."""

    def action(ps):
        r = submissions_sync(prolific_study_id=ps.pk)
        return (
            f"Synced {r.fetched} submission(s): {r.created} new, {r.changed} changed, "
            f"{r.freed} place(s) freed."
        )

    return _run(request, slug, action)


@sensitive_post_parameters("api_token", "webhook_secret")
@study_member_required(*OWNING)
@require_POST
def credentials(request: HttpRequest, slug: str) -> HttpResponse:
    """Save, replace or clear the study's own Prolific credentials (the study page's form), then
    back to the study page. A value is never echoed back, not even after an error."""
    study = request.study
    form = CredentialsForm(request.POST)
    back = redirect(reverse("researcher:study_detail", args=[slug]) + "#prolific-credentials")
    if not form.is_valid():
        messages.error(request, " ".join(m for ms in form.errors.values() for m in ms))
        return back
    data = form.cleaned_data
    done = []
    try:
        if data["api_token"] or data["webhook_secret"]:
            saved = credentials_save(
                study=study, api_token=data["api_token"] or None,
                webhook_secret=data["webhook_secret"] or None, actor=request.user, via="page",
            )
            done.append("saved " + " and ".join(CREDENTIAL_WORDS[k] for k in saved))
        if data["clear_api_token"] or data["clear_webhook_secret"]:
            cleared = credentials_clear(
                study=study, api_token=data["clear_api_token"],
                webhook_secret=data["clear_webhook_secret"], actor=request.user, via="page",
            )
            done.append("removed " + " and ".join(CREDENTIAL_WORDS[k] for k in cleared) if cleared
                        else "nothing to remove")
    except (ProlificServiceError, ProlificError) as exc:
        messages.error(request, str(exc))
        return back
    messages.success(request, f"Prolific credentials: {'; '.join(done)}.")
    return back


@study_member_required(*RUNNING)
@require_POST
def demographics(request: HttpRequest, slug: str) -> HttpResponse:
    """Fetch Prolific's demographic export of the study now (replaces the stored one)."""
    return _run(request, slug, lambda ps: demographics_fetch(prolific_study_id=ps.pk).message())


@study_member_required(*RUNNING)
@require_POST
def message(request: HttpRequest, slug: str) -> HttpResponse:
    """Send a message through Prolific to one participant (pseudonym) or a group; back to the
    review page or the monitor (``back``)."""
    study = request.study
    ps = _linked_or_redirect(request, study)
    if ps is not None:
        try:
            sent = message_send(
                prolific_study_id=ps.pk, template=request.POST.get("template", ""),
                pseudonym=request.POST.get("pseudonym", ""), status_filter=request.POST.get("group", ""),
                custom_text=request.POST.get("text", ""), sent_by=request.user,
            )
        except (ProlificServiceError, ProlificError) as exc:
            messages.error(request, f"{exc} Nothing was sent.")
        else:
            if sent.outcome == sent.Outcome.DONE:
                messages.success(request, f"Message sent to {len(sent.recipients)} participant(s).")
            else:
                messages.error(request, f"Prolific did not take the message: {sent.error}")
    if request.POST.get("back") == "monitor":
        return redirect("researcher:monitor", slug=slug)
    return redirect("prolific:review", slug=slug)


def _review_message(report: ReviewReport) -> str:
    """What a review action did, for the page; raises ``ProlificServiceError`` if it stopped."""
    if report.errors:
        raise ProlificServiceError(
            f"{report.done} of {report.selected} done, then: {report.errors[0]}"
        )
    if report.action == "approve":
        return (
            f"Approved {report.done} of {report.selected} submission(s) in "
            f"{report.api_calls} request(s); {len(report.held)} held for review."
        )
    if report.action == "manual":
        return f"{report.selected} submission(s) left for manual review on Prolific."
    return (
        f"{report.action.replace('_', ' ').capitalize()}: {report.done} of {report.selected} "
        "submission(s)."
    )


@study_member_required(*RUNNING)
@require_POST
def review_action(
    request: HttpRequest, slug: str, service: Callable[..., ReviewReport]
) -> HttpResponse:
    """Run one review action on the study's submissions and say what it did.

    ``service`` comes from the URL (``urls.py``): approve the completed submissions in bulk
    (:func:`~.services.review.submissions_approve_completed`), or ask to return (or reject, per
    the study's setting) the failed instruction checks
    (:func:`~.services.review.submissions_review_failed_checks`).
    """
    return _run(request, slug, lambda ps: _review_message(service(prolific_study_id=ps.pk, actor=request.user)))


@study_member_required(*RUNNING)
@require_POST
def bonus_draft(request: HttpRequest, slug: str) -> HttpResponse:
    """Check a bonus CSV and show the dry run (nothing is sent)."""
    study = request.study
    ps = _linked_or_redirect(request, study)
    if ps is None:
        return redirect("prolific:review", slug=slug)
    form = BonusCSVForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(m for ms in form.errors.values() for m in ms))
        return redirect("prolific:review", slug=slug)
    try:
        payment = bonus_payment_draft(
            prolific_study_id=ps.pk, csv_text=form.csv_text(), created_by=request.user
        )
    except ProlificServiceError as exc:
        messages.error(request, str(exc))
        return redirect("prolific:review", slug=slug)
    return redirect("prolific:bonus", slug=slug, pk=payment.pk)


@study_member_required(*RUNNING)
def bonus(request: HttpRequest, slug: str, pk: str) -> HttpResponse:
    """One bonus payment: its lines, total and status; a draft has the button to pay."""
    study = request.study
    pk = int(pk)
    payment = BonusPayment.objects.filter(pk=pk, prolific_study__study=study).first()
    if payment is None:
        raise Http404("No such bonus payment.")
    return render(request, "prolific/bonus.html", {"study": study, "payment": payment})


@study_member_required(*RUNNING)
@require_POST
def bonus_pay(request: HttpRequest, slug: str, pk: str) -> HttpResponse:
    """Set up and pay a drafted bonus payment, once."""
    study = request.study
    pk = int(pk)
    if not BonusPayment.objects.filter(pk=pk, prolific_study__study=study).exists():
        raise Http404("No such bonus payment.")
    try:
        payment = bonus_payment_pay(bonus_payment_id=pk)
        messages.success(request, f"Bonus payment {payment.pk} paid: {payment.total_minor_units / 100:.2f} in bonuses.")
    except (ProlificServiceError, ProlificError) as exc:
        messages.error(request, str(exc))
    return redirect("prolific:bonus", slug=slug, pk=pk)


# --- held submissions --------------------------------------------------------------------

#: The actions of a held submission's row, as in the URL, with their words.
HELD_ACTIONS = {
    ReviewDecision.Action.APPROVE: "Approve",
    ReviewDecision.Action.REQUEST_RETURN: "Ask for a return",
    ReviewDecision.Action.REJECT: "Reject",
}


@study_member_required(*RUNNING)
def held(request: HttpRequest, slug: str) -> HttpResponse:
    """The submissions bulk approval holds back, with their evidence and actions, and the record
    of decisions made."""
    study = request.study
    ps = _linked_or_redirect(request, study)
    if ps is None:
        return redirect("prolific:review", slug=slug)
    return render(request, "prolific/held.html", {
        "study": study,
        "queue": selectors.review_queue(ps),
        "decisions": selectors.review_decisions(ps),
        "actions": HELD_ACTIONS,
    })


@study_member_required(*RUNNING)
def held_decide(request: HttpRequest, slug: str, submission_id: str, action: str) -> HttpResponse:
    """The confirmation step of one decision on a held submission (GET), and the decision (POST,
    sent once: :func:`~.services.review.held_submission_decide`)."""
    study = request.study
    ps = _linked_or_redirect(request, study)
    if ps is None:
        return redirect("prolific:review", slug=slug)
    if action not in HELD_ACTIONS:
        raise Http404("No such action.")
    queue = selectors.review_queue(ps, submission_id=submission_id)
    row = next(iter(queue.held), None)
    if request.method != "POST" and row is None and not queue.to_approve:
        messages.error(request, "This submission is not awaiting review any more; nothing was sent.")
        return redirect("prolific:held", slug=slug)
    form = HeldDecisionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = held_submission_decide(
                prolific_study_id=ps.pk, submission_id=submission_id, action=action, confirmed=data["confirm"],
                rejection_category=data["rejection_category"], message=data["message"], note=data["note"],
                decided_by=request.user, decided_via="page",
            )
        except ValidationError as exc:
            form.add_error(None, " ".join(exc.messages))
        except (ProlificServiceError, ProlificError) as exc:
            if isinstance(exc, ProlificError) and exc.http_status == 400:
                form.add_error(None, str(exc))  # a bad rejection: fix it here, nothing was sent
            else:
                messages.error(request, str(exc))
                return redirect("prolific:held", slug=slug)
        else:
            d = result.decision
            word = HELD_ACTIONS[d.action].lower()
            if result.created:
                messages.success(request, f"Done on Prolific: {word} ({row.pseudonym if row else submission_id}).")
            else:
                messages.info(request, f"This decision ({word}) was made already; nothing was sent again.")
            return redirect("prolific:held", slug=slug)
    return render(request, "prolific/held_confirm.html", {
        "study": study, "row": row, "submission_id": submission_id, "action": action,
        "action_label": HELD_ACTIONS[action], "form": form, "default_return_reason": HELD_RETURN_REASON,
    })
