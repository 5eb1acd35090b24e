"""The consent step: agree, or decline and confirm (which ends the session)."""
from __future__ import annotations

from django.utils import timezone
from django.utils.translation import gettext

from ..forms import ConsentForm
from ..models import Participant
from ..selectors import completion_url
from . import keys, statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance

#: The query string of the consent page that asks a participant to confirm not taking part.
CONFIRM_DECLINE = "confirm=decline"


def consent_context(turn: Turn, form) -> dict:
    """The consent page; ``confirm_decline`` after a first "I do not agree"."""
    return {"confirm_decline": turn.query_string == CONFIRM_DECLINE}


def consent_save(turn: Turn, *, decision: str) -> Outcome | None:
    """Record the consent decision of a locked participant on the consent page.

    ``decision``: ``agree`` (on to the next step), ``decline`` (nothing saved: the page asks
    again, one click must not end a paid study) or ``decline_confirmed`` (status
    ``no_consent``, step ``done``, back to Prolific with the no-consent code).
    """
    if decision == "decline":
        return Outcome(redirect=f"?{CONFIRM_DECLINE}")
    now = turn.now or timezone.now()
    p = turn.participant
    if decision == "agree":
        p.consented_at = now
        advance(p, ["consented_at"])
        return None
    p.status = Participant.Status.NO_CONSENT
    p.step = keys.DONE
    p.finished_at = now
    p.draft = None
    statements.participant_save(p, ["status", "step", "finished_at", "draft", "updated_at"])
    return Outcome(redirect=completion_url(turn.plan.no_consent_code))


def consent_preview(page: PreviewPage):
    """The consent page as a participant first sees it."""
    return ConsentForm(), {}


def consent_pilot(pt: PilotTurn) -> dict:
    """A pilot participant agrees after the planned seconds (stamped as ``consented_at``)."""
    pt.turn.now = pt.advance(pt.seconds[keys.CONSENT])
    return {"decision": "agree"}


CONSENT = StepSpec(
    key=keys.CONSENT,
    template="participation/consent.html",
    form=ConsentForm,
    context=consent_context,
    values=lambda form: {"decision": form.cleaned_data["decision"]},
    save=consent_save,
    preview=consent_preview,
    pilot=consent_pilot,
    statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
    place=lambda p: (0, gettext("Your consent is saved"), gettext("this is the consent page")),
    started_at=lambda row, answers: row["started_at"],
    pilot_seconds=lambda profile, study, rng: rng.uniform(15, 60),
)
