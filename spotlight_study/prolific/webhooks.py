"""Verifying Prolific webhook requests (pure functions, no database).

Source: Prolific's API reference, "Webhooks > Verifying". A request carries
``X-Prolific-Request-Signature`` and ``X-Prolific-Request-Timestamp`` (UNIX seconds); the
signature is the base64 of the HMAC-SHA256, keyed with the workspace secret, of the timestamp
followed directly by the request body. Redeliveries carry the same ``X-Event-ID``; ``X-Timestamp``
tells when the event was sent (events may arrive out of order).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime, timezone

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIMESTAMP_HEADER = "X-Timestamp"


def signature(*, secret: str, timestamp: str, body: bytes) -> str:
    """The expected signature: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signature_valid(*, secret: str, timestamp: str, body: bytes, signature_header: str) -> bool:
    """Whether ``signature_header`` signs ``timestamp`` + ``body`` with ``secret``.

    Compared in constant time. Prolific's own example signs ``json.dumps`` of the parsed body, so
    that form is accepted too (both need the secret). An empty secret or signature never passes.
    """
    if not secret or not signature_header or not timestamp:
        return False
    candidates = [body]
    try:
        reserialized = json.dumps(json.loads(body)).encode()
    except ValueError:
        reserialized = None
    if reserialized is not None and reserialized != body:
        candidates.append(reserialized)
    given = signature_header.strip().encode()
    return any(
        hmac.compare_digest(signature(secret=secret, timestamp=timestamp, body=b).encode(), given)
        for b in candidates
    )


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
