"""The researcher's hand on stalled participants: their idle time, and ending them.

oTree's monitor can "advance the slowest participants"; here a researcher ends a participant who
has stalled (status ``ended_by_researcher``), from the monitor or with ``manage.py
end_participants``. Ending frees the participant's place in their cell at once (only completed
and in-progress participants hold one, :func:`.selectors.holding_filter`), so the next arrival can
take it, rather than after the study's abandonment timeout. The decision is kept like a review
decision (:class:`.models.ParticipantEnding`: who, when, why), and a participant who comes back
sees the ended page, which tells them to return the submission on Prolific.

Idle time is the time since the participant's last activity on the server: their row's last
write (a step saved, a typed draft kept) or the last serving or saving of a task page, whichever
is latest (seconds, server clock).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from spotlight_study.audit.services import audit_record
from spotlight_study.studies.models import Study

from .errors import EndingRefused
from .models import Participant, ParticipantEnding
from .selectors import participant_pseudonym

#: The longest reason kept (characters).
REASON_MAX_CHARS = 2000


@dataclass(frozen=True)
class Stalled:
    """An in-progress participant as an ending sees them: ``pseudonym`` (the export's),
    ``participant_id``, ``step`` (its key), ``idle_seconds`` (whole seconds since the last
    activity) and whether it is a ``pilot``."""

    pseudonym: str
    participant_id: int
    step: str
    idle_seconds: int
    pilot: bool


def _last_activity():
    """The expression of a participant's last activity: the latest of the row's ``updated_at``
    and its task pages' last serving and saving (``Greatest`` of ``Coalesce``-d maxima, so a
    participant without a task page counts from the row alone)."""
    return Greatest(
        "updated_at",
        Coalesce(Max("responses__last_served_at"), "updated_at"),
        Coalesce(Max("responses__answered_at"), "updated_at"),
    )


def participants_in_progress(
    *, study: Study, idle_minutes: int | None = None, pilot: bool | None = False,
    now: datetime | None = None, ids: Sequence[int] | None = None,
) -> list[Stalled]:
    """The study's participants in progress, most idle first; with ``idle_minutes``, only those
    idle for more than that many minutes. ``pilot``: ``False`` real participants only, ``True``
    pilots only, ``None`` both; ``ids``: only these participants. One query."""
    now = now or timezone.now()
    people = Participant.objects.filter(study=study, status=Participant.Status.IN_PROGRESS)
    if ids is not None:
        people = people.filter(pk__in=ids)
    if pilot is not None:
        people = people.filter(is_pilot=pilot)
    people = people.annotate(last_activity=_last_activity())
    if idle_minutes is not None:
        people = people.filter(last_activity__lt=now - timedelta(minutes=idle_minutes))
    rows = people.order_by("last_activity", "pk").values_list(
        "pk", "prolific_pid", "step", "is_pilot", "last_activity"
    )
    return [
        Stalled(
            pseudonym=participant_pseudonym(study=study, prolific_pid=pid),
            participant_id=pk,
            step=step,
            idle_seconds=max(0, int((now - last).total_seconds())),
            pilot=is_pilot,
        )
        for pk, pid, step, is_pilot, last in rows
    ]


def idle_participant_ids(*, study: Study, idle_minutes: int, now: datetime) -> set[int]:
    """Ids of the study's participants in progress (real and pilot) idle for more than
    ``idle_minutes`` minutes at ``now`` (the monitor's filter). One query."""
    return {
        pk
        for pk in Participant.objects.filter(study=study, status=Participant.Status.IN_PROGRESS)
        .annotate(last_activity=_last_activity())
        .filter(last_activity__lt=now - timedelta(minutes=idle_minutes))
        .values_list("pk", flat=True)
    }


@dataclass(frozen=True)
class EndReport:
    """What an ending did: the ``ended`` pseudonyms, and the ``skipped`` ones with why (no longer
    in progress: they finished or left meanwhile). ``endings`` are the decisions stored."""

    ended: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    endings: tuple[ParticipantEnding, ...] = ()


def participants_end(
    *, study: Study, pseudonyms: Sequence[str], reason: str, ended_by=None, via: str = "monitor",
    now: datetime | None = None, dry_run: bool = False,
) -> EndReport:
    """End the study's participants ``pseudonyms`` (export pseudonyms) who are in progress.

    Each gets status ``ended_by_researcher``, ``finished_at`` = ``now``, its draft cleared, and a
    :class:`.models.ParticipantEnding` with ``ended_by`` (a user, or ``None``), ``via``
    (``"monitor"``, ``"command"``), ``reason``, its step and idle seconds; its place in the cell
    is free from this instant. Participants no longer in progress are skipped (reported, not an
    error: they finished or left while the researcher decided). With ``dry_run`` nothing is
    written and the report says who would be ended.

    Raises
    ------
    EndingRefused
        For an empty reason or one over :data:`REASON_MAX_CHARS` characters, no pseudonym, or a
        pseudonym that is no participant of the study; nothing is changed.
    """
    reason = (reason or "").strip()
    if not reason:
        raise EndingRefused("Give a reason for ending: it is kept with the decision. Nothing was changed.")
    if len(reason) > REASON_MAX_CHARS:
        raise EndingRefused(
            f"The reason is longer than {REASON_MAX_CHARS:,} characters. Nothing was changed."
        )
    wanted = list(dict.fromkeys(p.strip() for p in pseudonyms if p and p.strip()))
    if not wanted:
        raise EndingRefused("Choose at least one participant to end. Nothing was changed.")
    now = now or timezone.now()
    with transaction.atomic():
        by_pseudonym = {
            participant_pseudonym(study=study, prolific_pid=pid): pk
            for pk, pid in Participant.objects.filter(study=study).values_list("pk", "prolific_pid")
        }
        unknown = [p for p in wanted if p not in by_pseudonym]
        if unknown:
            raise EndingRefused(
                f"No participant of this study has the pseudonym {unknown[0][:40]!r}"
                f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}. Nothing was changed."
            )
        ids = [by_pseudonym[p] for p in wanted]
        # Locked in id order, as every other writer of participant rows locks one row at a time.
        locked = {
            p.pk: p
            for p in Participant.objects.select_for_update().filter(pk__in=ids).order_by("pk")
        }
        idle = {
            s.participant_id: s
            for s in participants_in_progress(study=study, pilot=None, now=now, ids=ids)
        }
        ended, skipped, endings = [], [], []
        for pseudonym, pk in zip(wanted, ids):
            p = locked[pk]
            if p.status != Participant.Status.IN_PROGRESS:
                skipped.append((pseudonym, f"no longer in progress ({p.get_status_display()})"))
                continue
            ended.append(pseudonym)
            endings.append(ParticipantEnding(
                participant_id=pk, ended_by=ended_by, ended_via=via, ended_at=now, reason=reason,
                step=p.step, idle_seconds=idle[pk].idle_seconds if pk in idle else 0,
            ))
        if not dry_run and endings:
            Participant.objects.filter(
                pk__in=[e.participant_id for e in endings], status=Participant.Status.IN_PROGRESS
            ).update(
                status=Participant.Status.ENDED_BY_RESEARCHER, finished_at=now, draft=None,
                updated_at=now,
            )
            endings = ParticipantEnding.objects.bulk_create(endings)
            audit_record(
                action="participants.end", actor=ended_by, study=study,
                summary=f"Ended {len(ended)} participant(s) ({via}): {reason[:200]}",
                detail={"pseudonyms": ended, "via": via, "reason": reason},
            )
    return EndReport(ended=tuple(ended), skipped=tuple(skipped), endings=tuple(endings) if not dry_run else ())


def ending_message_recorded(*, endings: Sequence[ParticipantEnding], message_id: int) -> None:
    """Note on the stored ``endings`` the Prolific message sent with them (``message_id``)."""
    ParticipantEnding.objects.filter(pk__in=[e.pk for e in endings if e.pk]).update(message_id=message_id)
