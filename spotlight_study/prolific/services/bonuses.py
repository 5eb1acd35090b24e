"""Writes of bonus payments: read a bonus CSV into a draft (the dry run), then pay it exactly once.

Paying is the one call to Prolific that must never run twice (a second pay request pays the
participants again): :func:`bonus_payment_pay` commits ``pay_sent_at`` before the pay request
goes out and never retries it. Amounts are kept in minor units (pence, cents); the CSV the
researcher writes and the one Prolific takes are in major units (``1.50``).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from spotlight_study.identifiers import is_prolific_id, is_pseudonym
from spotlight_study.participation.selectors import participant_pseudonym

from .. import selectors
from ..client import ProlificClient
from ..errors import BonusAlreadySent, BonusCSVError, BonusPayFailed, NotLinked, ProlificError
from ..models import BonusPayment, ProlificStudy, Submission
from .study import NOT_LINKED_MESSAGE, linked_prolific_study, client_or_default


@dataclass(frozen=True)
class BonusItem:
    """One bonus: ``recipient`` (submission id, else PID) as sent to Prolific, ``participant``
    (pseudonym, for display) and ``amount_minor`` (minor units)."""

    recipient: str
    participant: str
    amount_minor: int


def _amount_minor(text: str) -> int:
    """``"4.25"`` -> 425. Raises ``ValueError`` with a message for the researcher."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise ValueError(f"{text!r} is not an amount (write major units, e.g. 1.50).") from None
    if not value.is_finite() or value <= 0:
        raise ValueError("The amount must be positive.")
    if value != value.quantize(Decimal("0.01")):
        raise ValueError("The amount has more than two decimals.")
    minor = int(value * 100)
    cap = settings.PROLIFIC_BONUS_MAX_MINOR_UNITS
    if minor > cap:
        raise ValueError(
            f"{value} is above the per-participant limit of {Decimal(cap) / 100:.2f} "
            "(PROLIFIC_BONUS_MAX_MINOR_UNITS); amounts are in major units."
        )
    return minor


class _Recipients:
    """Who a bonus CSV may name in one study: pseudonyms, participants' PIDs and submission ids.

    :meth:`pid_of` turns an id of the CSV into the participant's PID; :meth:`recipient_of` gives
    the id Prolific is sent for that PID (the running or latest submission, else the PID).
    """

    def __init__(self, prolific_study: ProlificStudy):
        self.by_pseudonym = selectors.participant_by_pseudonym(study=prolific_study.study)
        self.participants = {p.prolific_pid: p for p in self.by_pseudonym.values()}
        self.subs = {s.submission_id: s for s in Submission.objects.filter(prolific_study=prolific_study)}
        self.subs_by_pid: dict[str, Submission] = {}
        for s in self.subs.values():
            if s.status in selectors.LIVE_STATUSES or s.prolific_pid not in self.subs_by_pid:
                self.subs_by_pid[s.prolific_pid] = s

    def pid_of(self, ident: str) -> str | None:
        """The PID named by a pseudonym, a PID or a submission id; ``None`` if not of this study."""
        if is_pseudonym(ident):
            p = self.by_pseudonym.get(ident)
            return p.prolific_pid if p else None
        if is_prolific_id(ident):
            if ident in self.subs:
                return self.subs[ident].prolific_pid
            if ident in self.participants:
                return ident
        return None

    def recipient_of(self, pid: str) -> str:
        """The submission id to pay for ``pid``, else ``pid`` itself."""
        sub = self.subs_by_pid.get(pid)
        return sub.submission_id if sub else pid


def _csv_rows(text: str):
    """``(line number, [id, amount])`` of a bonus CSV's non-empty lines, header skipped.

    A row of another width is yielded as is, for the caller to report.
    """
    for n, row in enumerate(csv.reader(io.StringIO(text.strip())), start=1):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if n == 1 and len(cells) >= 2 and cells[1].lower() in ("amount", "bonus"):
            continue
        yield n, cells


def bonus_items_parse(*, prolific_study: ProlificStudy, text: str) -> list[BonusItem]:
    """Read a bonus CSV: ``id,amount`` per line, amounts in major units (``1.50``).

    ``id`` is a participant pseudonym from the export (``p_...``), a Prolific participant ID or
    a submission id of this study. An optional header line is skipped. Every line is checked
    first.

    Raises
    ------
    BonusCSVError
        Listing every bad line (unknown participant, bad or too large amount, a participant
        twice, no lines).
    """
    study = prolific_study.study
    recipients = _Recipients(prolific_study)
    errors: list[tuple[int, str]] = []
    items: list[BonusItem] = []
    seen: set[str] = set()
    for n, cells in _csv_rows(text):
        if len(cells) != 2:
            errors.append((n, "expected two columns: id,amount"))
            continue
        ident, amount_text = cells
        pid = recipients.pid_of(ident)
        if pid is None:
            errors.append((n, f"{ident!r} is not a participant of this study"))
            continue
        try:
            minor = _amount_minor(amount_text)
        except ValueError as exc:
            errors.append((n, str(exc)))
            continue
        if pid in seen:
            errors.append((n, "this participant already has a bonus in the file"))
            continue
        seen.add(pid)
        items.append(
            BonusItem(
                recipient=recipients.recipient_of(pid),
                participant=participant_pseudonym(study=study, prolific_pid=pid),
                amount_minor=minor,
            )
        )
    if not items and not errors:
        errors.append((1, "no bonuses in the file"))
    if errors:
        raise BonusCSVError(errors)
    return items


def bonus_payment_draft(*, prolific_study_id: int, csv_text: str, created_by=None) -> BonusPayment:
    """The dry run: check a bonus CSV and store it as a draft with its total. Nothing is sent.

    ``created_by`` is the researcher (a user, or ``None`` from the command line). Raises
    :class:`~spotlight_study.prolific.errors.BonusCSVError` (nothing stored) and
    :class:`~spotlight_study.prolific.errors.NotLinked`.
    """
    ps = linked_prolific_study(prolific_study_id)
    items = bonus_items_parse(prolific_study=ps, text=csv_text)
    payment = BonusPayment(
        prolific_study=ps,
        items=[
            {"recipient": i.recipient, "participant": i.participant, "amount_minor": i.amount_minor}
            for i in items
        ],
        csv_bonuses="\n".join(f"{i.recipient},{Decimal(i.amount_minor) / 100:.2f}" for i in items),
        total_minor_units=sum(i.amount_minor for i in items),
        created_by=created_by,
    )
    with transaction.atomic():
        payment.full_clean()
        payment.save()
    return payment


def _payment_not_sent(bonus_payment_id: int) -> tuple[BonusPayment, str]:
    """The payment (not sent yet) and its study's Prolific id; raises ``BonusAlreadySent``, ``NotLinked``."""
    with transaction.atomic():
        payment = BonusPayment.objects.select_for_update().select_related("prolific_study").get(
            pk=bonus_payment_id
        )
        if payment.pay_sent_at is not None:
            raise BonusAlreadySent(
                f"Bonus payment {payment.pk} was already sent to Prolific "
                f"({payment.get_status_display().lower()}); it is never sent twice."
            )
        prolific_id = payment.prolific_study.prolific_id
        if not prolific_id:
            raise NotLinked(NOT_LINKED_MESSAGE)
    return payment, prolific_id


def _setup_recorded(api: ProlificClient, payment: BonusPayment, prolific_id: str) -> None:
    """Set up a draft payment on Prolific (nothing is paid) and record its bulk id.

    A payment already set up is left as it is. The set-up is not retried by the client; if it
    fails nothing was paid, so paying again is safe.
    """
    if payment.status != BonusPayment.Status.DRAFT:
        return
    setup = api.bonus_setup(prolific_id, payment.csv_bonuses)
    with transaction.atomic():
        BonusPayment.objects.filter(pk=payment.pk, pay_sent_at__isnull=True).update(
            status=BonusPayment.Status.SET_UP,
            bulk_id=setup.id,
            setup_response={k: str(v) for k, v in setup.raw.items()},
            updated_at=timezone.now(),
        )


def _pay_sent_committed(bonus_payment_id: int) -> BonusPayment:
    """Commit ``pay_sent_at`` on a set-up payment, before its pay request goes out.

    Raises ``BonusAlreadySent`` if another request got there first or the payment is not set up.
    """
    with transaction.atomic():
        payment = BonusPayment.objects.select_for_update().get(pk=bonus_payment_id)
        if payment.pay_sent_at is not None or payment.status != BonusPayment.Status.SET_UP:
            raise BonusAlreadySent(f"Bonus payment {payment.pk} was already sent to Prolific.")
        payment.pay_sent_at = timezone.now()
        payment.status = BonusPayment.Status.PAY_SENT
        payment.save(update_fields=["pay_sent_at", "status", "updated_at"])
    return payment


def bonus_payment_pay(*, bonus_payment_id: int, client: ProlificClient | None = None) -> BonusPayment:
    """Set up a drafted bonus payment on Prolific and pay it, exactly once.

    1. Set-up (``POST /submissions/bonus-payments/``), if not done yet; nothing is paid.
    2. ``pay_sent_at`` is committed.
    3. The pay request (``POST /bulk-bonus-payments/{id}/pay/``) is sent once, never retried.

    Must not be called inside an open transaction (step 2 has to be committed before step 3).

    Raises
    ------
    BonusAlreadySent
        If the pay request of this payment was already sent (whatever its outcome).
    BonusPayFailed
        If the pay request failed; the payment is marked ``pay_failed`` and must be checked on
        Prolific by hand. It is never sent again.
    NotLinked
        If the study is not on Prolific.
    ProlificError
        If set-up failed (nothing was paid; paying again is safe).
    """
    study_id = BonusPayment.objects.filter(pk=bonus_payment_id).values_list(
        "prolific_study__study_id", flat=True
    ).first()
    with client_or_default(client, study_id=study_id) as api:
        payment, prolific_id = _payment_not_sent(bonus_payment_id)
        _setup_recorded(api, payment, prolific_id)
        payment = _pay_sent_committed(bonus_payment_id)
        try:
            api.bonus_pay(payment.bulk_id)
        except ProlificError as exc:
            BonusPayment.objects.filter(pk=payment.pk).update(
                status=BonusPayment.Status.PAY_FAILED, error=str(exc)[:2000], updated_at=timezone.now()
            )
            raise BonusPayFailed(
                f"The pay request for bonus payment {payment.pk} failed ({exc}). It may or may not "
                "have been paid: check the study's bonuses on Prolific. It will not be sent again."
            ) from None
        BonusPayment.objects.filter(pk=payment.pk).update(
            status=BonusPayment.Status.PAID, paid_at=timezone.now(), updated_at=timezone.now()
        )
        payment.refresh_from_db()
        return payment
