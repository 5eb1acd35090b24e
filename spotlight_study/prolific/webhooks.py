"""Verifying Prolific webhook requests (pure functions, no database).

Source: Prolific's API reference, "Webhooks > Verifying". A request carries
``X-Prolific-Request-Signature`` and ``X-Prolific-Request-Timestamp`` (UNIX seconds); the
signature is the base64 of the HMAC-SHA256, keyed with the workspace secret, of the timestamp
followed directly by the request body. Redeliveries carry the same ``X-Event-ID``; ``X-Timestamp``
tells when the event was sent (events may arrive out of order).

Nothing here parses an unverified body with unbounded cost: the signature over the raw bytes is
checked first, and the re-serialized form (Prolific's own example) is only tried on bodies of at
most :data:`MAX_BODY_BYTES` whose nesting depth is at most :data:`MAX_JSON_DEPTH`.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from datetime import datetime, timezone
from typing import Any

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIMESTAMP_HEADER = "X-Timestamp"
# Prolific's events are objects of a few hundred bytes, one level deep.
MAX_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
# PostgreSQL stores neither NUL (in text and jsonb) nor lone UTF-16 surrogates (not UTF-8).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def signature(*, secret: str, timestamp: str, body: bytes) -> str:
    """The expected signature: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def json_depth_within(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the brackets of ``body`` nest at most ``limit`` deep (outside JSON strings).

    A linear scan that parses nothing, so that a deeply nested body is turned away before
    ``json.loads`` could recurse on it.
    """
    depth, in_string, escaped = 0, False, False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return False
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return True


def _reserialized(body: bytes) -> bytes | None:
    """``json.dumps`` of the parsed body (Prolific's signing example), or ``None`` if the body is
    too large, too deeply nested or not JSON."""
    if len(body) > MAX_BODY_BYTES or not json_depth_within(body):
        return None
    try:
        return json.dumps(json.loads(body)).encode()
    except (ValueError, RecursionError):
        return None


def signature_valid(*, secret: str, timestamp: str, body: bytes, signature_header: str) -> bool:
    """Whether ``signature_header`` signs ``timestamp`` + ``body`` with ``secret``.

    Compared in constant time, first over the raw body (nothing parsed). Prolific's own example
    signs ``json.dumps`` of the parsed body, so that form is tried next, only on a body that
    :func:`_reserialized` accepts (both need the secret). An empty secret, timestamp or
    signature never passes.
    """
    if not secret or not signature_header or not timestamp:
        return False
    given = signature_header.strip().encode()

    def signs(candidate: bytes) -> bool:
        expected = signature(secret=secret, timestamp=timestamp, body=candidate).encode()
        return hmac.compare_digest(expected, given)

    if signs(body):
        return True
    reserialized = _reserialized(body)
    return reserialized is not None and reserialized != body and signs(reserialized)


class UnstorableNumber(ValueError):
    """A JSON number no database stores: ``NaN``, ``Infinity``, one that overflows a float
    (``1e400``) or an integer of more digits than Python converts (4,300)."""


def _refuse_constant(name: str):
    raise UnstorableNumber(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise UnstorableNumber(f"{text[:20]} is too large a number")
    return value


def _bounded_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        raise UnstorableNumber(f"an integer of {len(text)} digits is too large a number") from None


def payload_parse(body: bytes) -> dict[str, Any] | None:
    """A verified body as a JSON object, or ``None`` if it is not one (or nests too deeply).

    Raises :class:`UnstorableNumber` for ``NaN``, ``±Infinity``, a number beyond a float's
    range or an integer of over 4,300 digits: PostgreSQL's ``jsonb`` refuses the first three
    and SQLite's ``JSON_VALID`` check too, so the event is refused on either database alike.
    """
    if not json_depth_within(body):
        return None
    try:
        payload = json.loads(
            body, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int
        )
    except UnstorableNumber:
        raise
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def strip_unstorable(value: Any) -> Any:
    """``value`` with NUL characters and lone surrogates removed from every string in it.

    Works on JSON values (dicts, including their keys, lists, strings; other values unchanged).
    Removing them the same way on SQLite and PostgreSQL keeps the two alike; PostgreSQL would
    refuse to store them. No Prolific id or status contains them.
    """
    if isinstance(value, str):
        return _UNSTORABLE.sub("", value)
    if isinstance(value, dict):
        return {strip_unstorable(str(k)): strip_unstorable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_unstorable(v) for v in value]
    return value


def timestamp_parse(value: str) -> datetime | None:
    """A UNIX timestamp in seconds (integer or decimal) as an aware UTC datetime, or ``None``."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    if seconds != seconds or seconds < 0 or seconds > 32503680000:  # NaN, before 1970, after 3000
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def timestamp_fresh(*, value: str, now: datetime, tolerance_seconds: int) -> datetime | None:
    """The request time if it is within ``tolerance_seconds`` of ``now`` (either way), else ``None``."""
    sent = timestamp_parse(value)
    if sent is None or abs((now - sent).total_seconds()) > tolerance_seconds:
        return None
    return sent
