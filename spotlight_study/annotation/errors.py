"""The errors of the annotation app: one base, :class:`AnnotationError`, and its kinds.

Every error the annotation services raise on purpose derives from :class:`AnnotationError`, which
derives from :class:`spotlight_study.exceptions.DomainError`, so one handler can answer with
``code`` and ``http_status`` (see that module). ``str(error)`` is safe to show to annotators: it
never names a condition, a participant or another annotator.
"""

from __future__ import annotations

from datetime import datetime

from spotlight_study.exceptions import DomainError


class AnnotationError(DomainError):
    """Base class of annotation errors; ``str()`` is safe to show to annotators."""

    code = "annotation_error"
    http_status = 409


class ItemNotFound(AnnotationError):
    """No such item in the user's queue (the same answer whether it exists or not)."""

    code = "item_not_found"
    http_status = 404

    def __init__(self, message: str = "This item is not in your queue.", **kwargs):
        super().__init__(message, **kwargs)


class ReservationLost(AnnotationError):
    """The annotator's reservation expired and the item went to other annotators meanwhile."""

    code = "reservation_lost"
    http_status = 409


class PilotRoundClosed(AnnotationError):
    """The item is a pilot answer and the study's pilot annotation round is closed."""

    code = "pilot_round_closed"
    http_status = 409

    def __init__(
        self,
        message: str = "The pilot annotation round of this study is closed: pilot items are "
        "not handed out or saved until the researcher opens it again.",
        **kwargs,
    ):
        super().__init__(message, **kwargs)


class InvalidLabel(AnnotationError):
    """A label that breaks the schema; ``errors`` maps a field to its message.

    ``fields`` holds the same as ``{field: [message]}`` for the shared error body.
    """

    code = "invalid_label"
    http_status = 400

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__(
            "; ".join(f"{k}: {v}" for k, v in errors.items()),
            fields={k: [v] for k, v in errors.items()},
        )


class StaleLabel(AnnotationError):
    """The label was changed (e.g. in another tab) since the page that sent this save was opened.

    ``current`` is the saved label (``label_dict()``), ``revision`` its revision number and
    ``updated_at`` when it was saved; nothing was changed. A handler should return these three
    with the error so the client can show both versions.
    """

    code = "stale_label"
    http_status = 409

    def __init__(self, *, current: dict, revision: int, updated_at: datetime):
        self.current = current
        self.revision = revision
        self.updated_at = updated_at
        super().__init__(
            f"You saved this label again (save {revision}) after this page was opened, "
            "for example in another tab. Nothing was overwritten."
        )

    @property
    def extra(self) -> dict:
        """The saved label for the JSON error body, beside ``"error"`` (see
        :func:`spotlight_study.exceptions.domain_error_body`)."""
        return {"current": self.current, "revision": self.revision, "updated_at": self.updated_at}


class NotAllowed(AnnotationError):
    """An action the user may not take on this item (e.g. adjudicating their own label)."""

    code = "not_allowed"
    http_status = 403


class LabelImportError(AnnotationError):
    """A label file with bad rows; ``errors`` is a list of ``(line, message)``; nothing changed.

    Line 0 stands for the file itself (missing, not UTF-8); line 1 is the header. ``fields``
    holds the same as ``{"line <n>": [message, ...]}``.
    """

    code = "label_import_invalid"
    http_status = 400

    def __init__(self, errors: list[tuple[int, str]]):
        self.errors = errors
        fields: dict[str, list[str]] = {}
        for line, message in errors:
            fields.setdefault(f"line {line}", []).append(message)
        super().__init__("\n".join(f"line {n}: {m}" for n, m in errors), fields=fields)


class MachineAcceptanceError(AnnotationError):
    """Machine labels that cannot be accepted (or un-accepted) as asked; nothing was changed.

    For example: no machine labels of that model in the study, an unknown label field, or a
    label field already accepted from another model.
    """

    code = "machine_acceptance_refused"
    http_status = 409


class TeamError(AnnotationError):
    """A team change that cannot be made as asked; the message says why. Nothing was changed."""

    code = "team_change_refused"
    http_status = 400


class MachineCodingError(AnnotationError):
    """A machine-coding job action that cannot be done (a job for this model is still active, or
    the job is finished or still running); the message says why."""

    code = "machine_coding_refused"
    http_status = 409


class InvalidReply(AnnotationError):
    """The model's reply is not a JSON object matching the schema; the message says why.

    Caught by the machine coder, which asks again and then stores the label as missing with this
    message; it does not reach a user as an error.
    """

    code = "invalid_reply"
    http_status = 502
