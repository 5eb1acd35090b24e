"""The errors of the participant flow: one base, :class:`ParticipationError`, and its kinds.

Every error the participation services raise on purpose derives from
:class:`ParticipationError`, which derives from :class:`spotlight_study.exceptions.DomainError`,
so a handler answers with the error's ``code`` and ``http_status`` (the participant views use
``http_status`` for the status of the refusal page). ``str(error)`` is safe to show to a
participant: it never names a condition or another participant.
"""
from __future__ import annotations

from django.utils.translation import gettext_lazy

from spotlight_study.exceptions import DomainError


class ParticipationError(DomainError):
    """Base class of the participant flow's errors; ``str()`` is safe to show a participant."""

    code = "participation_error"
    http_status = 409


class StudyNotOpen(ParticipationError):
    """The study does not accept new participants (draft, paused or closed)."""

    code = "study_not_open"
    http_status = 409


class ArrivalRefused(ParticipationError):
    """An arrival whose Prolific IDs contradict what is known; nothing is created.

    ``title`` is a short heading for the participant's page; ``str()`` explains what to do.
    """

    code = "arrival_refused"
    http_status = 400
    title = gettext_lazy("This study link cannot be used")


class StudyFull(ArrivalRefused):
    """The study stops at its target (``stop_at_target``) and the places held reach it.

    A polite page (200), not an error: the participant did nothing wrong. Prolific's way for a
    participant who gets no place is to return the submission, which costs them nothing.
    """

    code = "study_full"
    http_status = 200
    title = gettext_lazy("This study is full")


class WrongStudy(ArrivalRefused):
    """``STUDY_ID`` is not the Prolific study this study is linked to."""

    code = "wrong_study"
    http_status = 400
    title = gettext_lazy("This link belongs to another Prolific study")


class SessionInUse(ArrivalRefused):
    """``SESSION_ID`` was already used by another participant of this study."""

    code = "session_in_use"
    http_status = 409
    title = gettext_lazy("This Prolific session was already used")


class StaleStep(ParticipationError):
    """The submitted page is not the participant's current step (double submit, old tab)."""

    code = "stale_step"
    http_status = 409


class InvalidAnswer(ParticipationError):
    """An answer that is empty or too long."""

    code = "invalid_answer"
    http_status = 400


class PilotError(ParticipationError):
    """The pilot cannot run (bad number of participants, study without tasks)."""

    code = "pilot_not_possible"
    http_status = 409


class InvalidDraft(ParticipationError):
    """A typed draft that cannot be kept: a malformed token, a field this page does not have,
    a repeated field or a value out of bounds (400); nothing is stored."""

    code = "invalid_draft"
    http_status = 400


class ForeignDraft(InvalidDraft):
    """A typed draft whose page token belongs to another participant (403); nothing is stored."""

    code = "foreign_draft"
    http_status = 403


class EndingRefused(ParticipationError):
    """A researcher's request to end participants that cannot be done as asked (no reason, an
    unknown pseudonym, nobody chosen); nothing is changed. ``str()`` says what to fix."""

    code = "ending_refused"
    http_status = 400
