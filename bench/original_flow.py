"""The form-following participant of the paper's original study app (issue 39 §4), shared by
``bench/original_compare.py`` (over HTTP, against its uWSGI) and ``bench/original_inprocess.py``
(its WSGI application called in one process). Standard library only, so that the in-process
script runs in the original's own virtualenv.

The participant follows the pages' forms as a browser does: the Prolific start link, every form
with its hidden fields, the textareas filled, the first choice of each radio group, 302/303
followed with GET and 307 with the same POST, until a page without a form (the last one).
"""
from __future__ import annotations

import html
import re
from collections.abc import Generator
from urllib.parse import urlencode, urlsplit

from bench.flow import FlowError

_FORM_RE = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S | re.I)
_TAG_RE = re.compile(r"<(input)\b([^>]*)>()|<(textarea)\b([^>]*)>(.*?)</textarea>", re.S | re.I)
_ATTR_RE = re.compile(r'([\w-]+)\s*=\s*"([^"]*)"')
ANSWER = "Group 2 describes the doctor more often as a woman; group 1 is about farming crops."
MAX_PAGES = 30

#: One request: (method, path with its query string, urlencoded body or None).
Request = tuple[str, str, bytes | None]


def form_of(page: str) -> tuple[str, dict[str, str]] | None:
    """The first form of ``page``: ``(action path, fields)`` as a browser would submit it after
    a participant filled it (hidden and text values kept, empty textareas answered, the first
    radio of each group chosen), or None when the page has no form."""
    match = _FORM_RE.search(page)
    if not match:
        return None
    action = html.unescape(dict(_ATTR_RE.findall(match.group(1))).get("action", ""))
    fields: dict[str, str] = {}
    for groups in _TAG_RE.findall(match.group(2)):
        kind, attrs_text, content = groups[:3] if groups[0] else groups[3:]
        attrs = dict(_ATTR_RE.findall(attrs_text))
        name = attrs.get("name")
        if not name:
            continue
        if kind.lower() == "textarea":
            fields[name] = html.unescape(content).strip() or ANSWER
        elif attrs.get("type", "text").lower() == "radio":
            fields.setdefault(name, html.unescape(attrs.get("value", "on")))
        elif attrs.get("type", "text").lower() not in ("submit", "button", "checkbox"):
            fields[name] = html.unescape(attrs.get("value", ""))
    return action, fields


def participant(pid: str) -> Generator[Request, tuple[int, str, str], int]:
    """One participant of the original app, as a generator the caller drives: it yields each
    request, and is sent back ``(status, Location header or "", body text)`` for it. Returns
    (``StopIteration.value``) the number of requests once a page without a form arrives.
    Raises :class:`bench.flow.FlowError` on a status other than 200, 302, 303 or 307, or after
    :data:`MAX_PAGES` requests without an end."""
    method, path, body = "GET", "/start?" + urlencode({"PROLIFIC_PID": pid}), None
    for requests in range(1, MAX_PAGES + 1):
        status, location, page = yield method, path, body
        if status in (302, 303, 307):
            path = urlsplit(location).path or "/"
            if status != 307:
                method, body = "GET", None
            continue
        if status != 200:
            raise FlowError(f"{method} {path}: status {status}")
        form = form_of(page)
        if form is None:
            return requests
        action, fields = form
        method, path, body = "POST", action or path, urlencode(fields).encode()
    raise FlowError(f"no end after {MAX_PAGES} pages")
