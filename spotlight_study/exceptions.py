"""The one root of the apps' own errors.

Every app has one base error in ``<app>/errors.py`` that derives from :class:`DomainError`; every
error an app's services raise derives from that base. A ``DomainError`` carries what a handler
needs to answer a request without an ``isinstance`` ladder:

- ``code``: a stable machine-readable name (snake case, listed in ``docs/api.md``);
- ``http_status``: the HTTP status an API answers with (400 bad input, 404 missing,
  409 a state that forbids the action, 502 an upstream service failing);
- ``fields``: ``{input field or study-file path: [message, ...]}``, empty unless the input was
  invalid.

Both JSON APIs (the researcher API and the annotator API) and the request-hygiene middleware
map a ``DomainError`` to the same body, :func:`domain_error_body`. Plain Python, no Django, so
pure modules may raise these too.
"""
from __future__ import annotations

# The URL prefixes of the two JSON APIs (the researcher API and the annotator API): requests
# under them are answered with the JSON error body, also before a view runs (refused bodies) and
# when no view matches (404).
JSON_API_PREFIXES = ("/api/", "/annotate/api/")


class DomainError(Exception):
    """Base of every error the apps raise on purpose.

    Subclasses set the class attributes ``code`` and ``http_status``; an instance may override
    either through the keyword arguments. ``str(error)`` is the message for people.

    Args:
        message: the message for people.
        code: overrides the class's ``code``.
        http_status: overrides the class's ``http_status``.
        fields: per-field messages, ``{name: [message, ...]}``.
    """

    code: str = "error"
    http_status: int = 409

    def __init__(
        self,
        message: str = "",
        *args: object,
        code: str | None = None,
        http_status: int | None = None,
        fields: dict[str, list[str]] | None = None,
    ) -> None:
        super().__init__(message, *args)
        if code is not None:
            self.code = code
        if http_status is not None:
            self.http_status = http_status
        self.fields = fields or {}

    @property
    def message(self) -> str:
        """The message for people (the first argument)."""
        return str(self.args[0]) if self.args else ""


def error_body(*, status_code: int, code: str, message: str, fields: dict | None = None) -> dict:
    """The one JSON error shape: ``{"error": {"status", "code", "message", "fields"}}``.

    ``status`` repeats the HTTP status; ``fields`` maps an input field to its messages (empty
    unless the input was invalid).
    """
    return {"error": {"status": status_code, "code": code, "message": message, "fields": fields or {}}}


def domain_error_body(error: DomainError) -> dict:
    """The body of a :class:`DomainError`: :func:`error_body` plus its ``extra`` keys, if any.

    ``extra`` (an optional attribute, e.g. a stale label's current value) sits beside ``"error"``
    and can never replace it.
    """
    body = error_body(
        status_code=error.http_status, code=error.code, message=error.message, fields=error.fields
    )
    extra = getattr(error, "extra", None) or {}
    return {**extra, **body}
