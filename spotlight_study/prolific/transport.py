"""The HTTP side of the Prolific client: authentication, timeouts, retries, errors and paging.

:class:`ProlificTransport` sends one request to Prolific's API (httpx) and knows nothing of its
endpoints (those are :class:`~.client.ProlificClient`'s). Source: Prolific's API reference
(https://docs.prolific.com/api-reference), "Authentication", "Errors" and "Pagination".

- Every request carries ``Authorization: Token <token>`` and a timeout; redirects are not
  followed (the token would go along).
- Errors become :class:`~.errors.ProlificAPIError` with Prolific's ``error_code``, ``title``
  and ``detail``, read from ``{"error": {...}}`` or from a flat ``{"detail": ...}``.
- Only requests sent as idempotent are retried (exponential backoff with jitter, on 429, 5xx and
  network errors; ``Retry-After`` is honoured).
- Lists follow ``_links.next.href`` on the API's own host only.

Plain Python, no Django. The transport never logs or shows the token.
"""
from __future__ import annotations

import logging
import random
import time
from typing import Any, Callable, Iterable
from urllib.parse import urljoin, urlsplit

import httpx

from .errors import ProlificAPIError, ProlificNotConfigured, ProlificPagingError, ProlificTransportError

logger = logging.getLogger(__name__)

# A list that keeps giving new pages past this is treated as broken rather than followed forever.
MAX_PAGES = 10_000
# The longest wait between two attempts, in seconds (also caps a ``Retry-After``).
MAX_DELAY_SECONDS = 60.0


def error_from_response(response: httpx.Response, method: str, path: str) -> ProlificAPIError:
    """Read Prolific's error body: ``{"error": {...}}``, or a flat ``{"detail": ...}``.

    A body that is not JSON is kept as its first 500 characters of text.
    """
    error_code, title, detail = None, "", None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        error_code = err.get("error_code")
        title = str(err.get("title") or "")
        detail = err.get("detail")
        if detail is None:
            detail = err.get("additional_information")
    elif isinstance(body, dict):
        detail = body.get("detail", body.get("message", body or None))
        title = str(body.get("title") or "")
        error_code = body.get("error_code")
    elif body is not None:
        detail = body
    else:
        detail = response.text[:500] or None
    return ProlificAPIError(
        status_code=response.status_code,
        method=method,
        path=path,
        error_code=error_code,
        title=title,
        detail=detail,
    )


def _decoded(response: httpx.Response) -> Any:
    """A successful answer's body: JSON decoded, ``None`` when empty, else the text."""
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


class ProlificTransport:
    """Requests to Prolific's API over one httpx connection pool.

    Parameters
    ----------
    token : str
        The API token. Sent as ``Authorization: Token <token>``.
    base_url : str
        The API root; a missing final ``/`` is added.
    timeout_seconds : float
        Timeout of every request (connect, read, write, pool), in seconds.
    max_retries : int
        Retries of an idempotent request after a 429, a 5xx or a network error.
    backoff_seconds : float
        Base of the exponential backoff: attempt ``n`` waits ``backoff * 2**n`` seconds times a
        random factor in [0.5, 1] (full jitter on the upper half), at most 60 s; a
        ``Retry-After`` header in seconds wins when it is longer.
    sleep : callable
        ``time.sleep`` by default (tests may pass a recorder).

    Raises
    ------
    ProlificNotConfigured
        If ``token`` is empty.
    """

    def __init__(
        self,
        *,
        token: str,
        base_url: str,
        timeout_seconds: float,
        max_retries: int,
        backoff_seconds: float,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not token:
            raise ProlificNotConfigured(
                "No Prolific API token: set PROLIFIC_API_TOKEN in the environment."
            )
        if not base_url.endswith("/"):
            base_url += "/"
        self.base_url = base_url
        self.max_retries = max(0, int(max_retries))
        self.backoff_seconds = max(0.0, float(backoff_seconds))
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(timeout_seconds),
            follow_redirects=False,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds to wait before retry ``attempt`` (0-based), honouring ``Retry-After``."""
        delay = min(MAX_DELAY_SECONDS, self.backoff_seconds * (2**attempt)) * random.uniform(0.5, 1.0)
        if response is not None:
            retry_after = response.headers.get("Retry-After", "")
            if retry_after.strip().isdigit():
                delay = max(delay, min(MAX_DELAY_SECONDS, float(retry_after)))
        return delay

    def request(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool,
        json: Any = None,
        params: dict[str, Any] | None = None,
        with_headers: bool = False,
    ) -> Any:
        """Send one request; return the decoded JSON body (``None`` when empty, text if not JSON),
        or ``(body, response headers)`` with ``with_headers`` (a subscription's ``X-Hook-Secret``).

        ``path`` is relative to ``base_url`` or an absolute URL on the same host (next links).
        Retries only when ``idempotent`` is true. Raises :class:`~.errors.ProlificAPIError` or
        :class:`~.errors.ProlificTransportError`.
        """
        attempts = 1 + (self.max_retries if idempotent else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(method, path, json=json, params=params)
            except httpx.TransportError as exc:
                if last:
                    raise ProlificTransportError(
                        f"{method} {path}: no answer from Prolific ({type(exc).__name__})."
                    ) from None
                delay = self.delay(attempt, None)
                logger.warning("Prolific %s %s: %s; retrying in %.2f s.", method, path, type(exc).__name__, delay)
                self._sleep(delay)
                continue
            if response.is_success:
                body = _decoded(response)
                return (body, response.headers) if with_headers else body
            error = error_from_response(response, method, path)
            if last or not error.retryable:
                raise error
            delay = self.delay(attempt, response)
            logger.warning("Prolific %s %s answered %s; retrying in %.2f s.", method, path, response.status_code, delay)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def same_host(self, url: str) -> str:
        """A next link, made absolute and checked to stay on the API's host (the token goes there).

        Raises :class:`~.errors.ProlificPagingError` for a link to another scheme or host.
        """
        absolute = urljoin(self.base_url, url)
        base, target = urlsplit(self.base_url), urlsplit(absolute)
        if (target.scheme, target.netloc) != (base.scheme, base.netloc):
            raise ProlificPagingError(f"A next link points away from the API host: {target.netloc}.")
        return absolute

    def paginate(self, path: str) -> Iterable[dict[str, Any]]:
        """Every item of a list, following ``_links.next.href`` until it is empty.

        A next link already visited ends the list (a loop), and items are deduplicated by
        ``id`` (a page served twice adds nothing). Raises :class:`~.errors.ProlificPagingError`
        after :data:`MAX_PAGES` pages.
        """
        seen_ids: set[str] = set()
        visited: set[str] = set()
        url: str | None = self.same_host(path)
        pages = 0
        while url:
            if url in visited:
                logger.warning("Prolific list %s: next link %s repeats; stopping.", path, url)
                break
            visited.add(url)
            pages += 1
            if pages > MAX_PAGES:
                raise ProlificPagingError(f"{path}: more than {MAX_PAGES} pages.")
            body = self.request("GET", url, idempotent=True) or {}
            for item in body.get("results") or []:
                item_id = str(item.get("id"))
                if item_id in seen_ids:
                    continue
                seen_ids.add(item_id)
                yield item
            next_link = ((body.get("_links") or {}).get("next") or {}).get("href")
            url = self.same_host(next_link) if next_link else None
