"""One simulated participant: parse each step page's form and walk the whole flow.

The walk is the one a browser without JavaScript makes, plus the telemetry that
``static/js/flow.js`` would add:

    GET  /s/<slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..   -> 302 /s/<slug>/step/
    GET  step (consent)        POST csrfmiddlewaretoken, token, decision=agree   -> 302 step
    GET  step (instructions)   POST csrfmiddlewaretoken, token                   -> 302 step
    GET  step (training)       3 x POST draft (csrfmiddlewaretoken, token, answer_0 so far) -> 204
                               POST csrfmiddlewaretoken, token, answer_0, client_events -> 302 step
    GET  step (task 1..k)      (same, answer_1..answer_k)                        -> 302 step
    GET  step (survey)         POST csrfmiddlewaretoken, token, c__*/b__* radios, comment
                                                 -> 302 https://app.prolific.com/...?cc=<code>

The drafts are what ``static/js/draft.js`` sends after pauses in typing: a third, two thirds and
all of the answer, each to ``/s/<slug>/draft/``, at :data:`DRAFTS_PER_TASK` per task.

Hidden values (the CSRF token and the per-page ``token``) and the survey's radio names are parsed
from each page with regular expressions (an HTML parser would cost the driver more CPU than the
server spends on the page). Redirects are never followed; the final Prolific redirect is checked.
The HTTP transport is given by the caller (``bench.driver``), so this module does no I/O itself.
"""
from __future__ import annotations

import html
import json
import random
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote_plus, urlencode, urlsplit

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
MAX_PAGES_PER_FLOW = 20  # consent, instructions, training, k tasks, survey: far below this
DRAFTS_PER_TASK = 3  # typed drafts saved on each training and main task page before its POST

# Django's templates and widgets write attributes as name="value", in any order: one pattern
# with lookaheads gives (type, name, value) of every <input> in a single C-level pass, several
# times cheaper for the driver than a general HTML or attribute parser.
_INPUT_RE = re.compile(
    r'<input\b(?=[^>]*\btype="([^"]*)")?(?=[^>]*\bname="([^"]*)")(?=[^>]*\bvalue="([^"]*)")?[^>]*>',
    re.IGNORECASE,
)
_TEXTAREA_RE = re.compile(r"<textarea\b[^>]*\bname=\"([^\"]+)\"", re.IGNORECASE)
_BUTTON_RE = re.compile(r"<button\b([^>]*)>", re.IGNORECASE)
_NAME_RE = re.compile(r'\bname="([^"]*)"')
_VALUE_RE = re.compile(r'\bvalue="([^"]*)"')
_MESSAGE_RE = re.compile(r"<ul class=\"messages\">(.*?)</ul>", re.DOTALL)
_SAFE_RE = re.compile(r"[A-Za-z0-9_.~-]*\Z")


def _unescape(value: str) -> str:
    return html.unescape(value) if "&" in value else value


def _attr(pattern: re.Pattern, tag: str) -> str | None:
    m = pattern.search(tag)
    if m is None:
        return None
    value = m.group(1)
    return html.unescape(value) if "&" in value else value


@dataclass
class Page:
    """The form of a step page: hidden values, radio groups, text areas, submit buttons and the
    text of Django's message list (shown when a POST was refused)."""

    hidden: dict[str, str]
    radios: dict[str, list[str]]
    textareas: set[str]
    buttons: list[dict[str, str]]
    messages: str

    @property
    def token(self) -> str | None:
        """The page's ``token`` hidden field (``<step>:<index>:<tag>``), None if missing."""
        return self.hidden.get("token")

    @property
    def kind(self) -> str:
        """``consent``, ``instructions``, ``training``, ``task``, ``survey`` or ``?``."""
        return (self.token or "?").split(":", 1)[0]

    @property
    def step_and_index(self) -> str:
        """The token without its participant tag (``task:1:3f9c0a12be`` -> ``task:1``)."""
        return ":".join((self.token or "?").split(":")[:2])


def form_encode(data: dict[str, str]) -> bytes:
    """``application/x-www-form-urlencoded`` of ``data`` (as ``urlencode``, quoting only the
    values that need it: most are plain digits and letters)."""
    return "&".join(
        f"{k if _SAFE_RE.match(k) else quote_plus(k)}={v if _SAFE_RE.match(v) else quote_plus(v)}"
        for k, v in data.items()
    ).encode()


def parse_page(text: str) -> Page:
    """Parse the form of a step page (HTML text) into a :class:`Page`."""
    hidden: dict[str, str] = {}
    radios: dict[str, list[str]] = {}
    for kind, name, value in _INPUT_RE.findall(text):
        kind = kind.lower()
        if kind == "hidden":
            hidden[_unescape(name)] = _unescape(value)
        elif kind == "radio":
            radios.setdefault(_unescape(name), []).append(_unescape(value))
    buttons = [{"name": _attr(_NAME_RE, b) or "", "value": _attr(_VALUE_RE, b) or ""} for b in _BUTTON_RE.findall(text)]
    m = _MESSAGE_RE.search(text)
    msg = re.sub(r"<[^>]+>", " ", m.group(1)).strip() if m else ""
    return Page(hidden, radios, set(_TEXTAREA_RE.findall(text)), buttons, " ".join(msg.split()))


class FlowError(Exception):
    """A flow went wrong: a bad status, an unexpected redirect or page, a transport error."""


@dataclass
class Response:
    """What the transport returns: status, lower-cased headers (last value wins), the body and
    the request's latency in ms (from sending to the last body byte, connecting included)."""

    status: int
    headers: dict[str, str]
    body: bytes
    elapsed_ms: float


@dataclass
class FlowResult:
    """The outcome of one participant: its PID, whether it completed, the first error and the
    pages it saw (``step:index``)."""

    pid: str
    ok: bool
    error: str | None = None
    pages: list[str] = field(default_factory=list)


# (method, path, form body or None) -> Response; raises FlowError for connection errors and
# timeouts.
Send = Callable[[str, str, "bytes | None"], Awaitable[Response]]
# (request kind such as "POST survey", latency in ms, HTTP status) -> None.
Record = Callable[[str, float, int], None]


def post_data(page: Page, rng: random.Random) -> dict[str, str]:
    """The form values a participant sends for ``page``; FlowError if the form is not as expected."""
    kind = page.kind
    if "csrfmiddlewaretoken" not in page.hidden or page.token is None:
        raise FlowError(f"{kind} page: no csrfmiddlewaretoken/token hidden field (messages: {page.messages!r})")
    data = {"csrfmiddlewaretoken": page.hidden["csrfmiddlewaretoken"], "token": page.token}
    if kind == "consent":
        if not any(b.get("name") == "decision" and b.get("value") == "agree" for b in page.buttons):
            raise FlowError("consent page: no decision=agree button")
        data["decision"] = "agree"
    elif kind == "instructions":
        pass
    elif kind in ("training", "task"):
        # Each task's box is named answer_<position> (see participation.forms.AnswerForm).
        boxes = sorted(n for n in page.textareas if n.startswith("answer_"))
        if len(boxes) != 1 or "client_events" not in page.hidden:
            raise FlowError(f"{kind} page: no answer_<position> textarea / client_events field")
        data[boxes[0]] = (
            "In group 1 the angler fishes during the day in the sun, in group 2 at night "
            "under the moon and the stars."
            if kind == "training"
            else "Group 2 describes the person more often as a woman and mentions family; "
            f"group 1 is more about work. (bench answer {rng.randrange(10**6)})"
        )
        data["client_events"] = json.dumps(
            {
                "paste_count": 0,
                "paste_chars": 0,
                "hidden_ms": 0,
                "blur_count": 1,
                "events": [{"t": rng.randrange(5_000, 90_000), "type": "blur"}],
            }
        )
    elif kind == "survey":
        names = [n for n in page.radios if n.startswith(("c__", "b__"))]
        if not names:
            raise FlowError("survey page: no c__*/b__* radio fields")
        for name in names:
            values = page.radios[name]
            if sorted(values) != ["1", "2", "3", "4", "5"]:
                raise FlowError(f"survey page: {name} has values {values}, not 1..5")
            data[name] = rng.choice(values)
        data["comment"] = "" if rng.random() < 0.7 else "All fine, thank you."
    else:
        raise FlowError(f"unknown page (token {page.token!r}; messages: {page.messages!r})")
    return data


def draft_bodies(page: Page, data: dict[str, str], per_task: int = DRAFTS_PER_TASK) -> list[dict[str, str]]:
    """The typed drafts a participant's browser sends on a task page before posting ``data``
    (:func:`post_data`): ``per_task`` growing prefixes of the answer; none on other pages."""
    if page.kind not in ("training", "task") or per_task <= 0:
        return []
    box = next(name for name in data if name.startswith("answer_"))
    answer = data[box]
    base = {"csrfmiddlewaretoken": data["csrfmiddlewaretoken"], "token": data["token"]}
    return [
        {**base, box: answer[: len(answer) * (i + 1) // per_task]}
        for i in range(per_task)
    ]


def expected_sequence(n_tasks: int) -> list[str]:
    """The pages of a complete flow with ``n_tasks`` main tasks (the survey token carries the
    last task index)."""
    n = max(n_tasks, 1)
    return ["consent:0", "instructions:0", "training:0"] + [f"task:{i}" for i in range(n)] + [f"survey:{n - 1}"]


def _location(r: Response, step_path: str) -> tuple[str, str]:
    """``("step", "")``, ``("prolific", cc)`` or ``("other", url)`` for a redirect."""
    loc = r.headers.get("location", "")
    if loc.startswith(PROLIFIC_COMPLETE_URL):
        return "prolific", (parse_qs(urlsplit(loc).query).get("cc") or [""])[0]
    parts = urlsplit(loc)
    if parts.path == step_path and (not parts.netloc or parts.scheme in ("http", "https")):
        return "step", ""
    return "other", loc


def _expect(r: Response, status: int, what: str) -> None:
    if r.status != status:
        detail = f" -> {r.headers.get('location')}" if 300 <= r.status < 400 else ""
        raise FlowError(f"{what}: HTTP {r.status} (expected {status}){detail}")


async def walk(send: Send, record: Record, *, slug: str, completion_code: str, pid: str | None = None,
               drafts_per_task: int = DRAFTS_PER_TASK) -> FlowResult:
    """Walk one participant through the study ``slug``; never raises (errors are in the result).

    ``send`` is the transport (see :data:`Send`); ``record`` receives each request's kind,
    latency and status (see :data:`Record`); ``drafts_per_task`` typed drafts (each must answer
    204) precede each task's POST (:func:`draft_bodies`). The flow stops at its first error: a status
    other than the expected one, a page shown again after its POST (the POST was not taken), a
    sequence other than consent, instructions, training, tasks, survey, or a final redirect that
    is not Prolific's with ``completion_code``.
    """
    pid = pid or secrets.token_hex(12)
    result = FlowResult(pid=pid, ok=False)
    rng = random.Random(pid)
    step_path = f"/s/{slug}/step/"
    draft_path = f"/s/{slug}/draft/"
    try:
        query = urlencode({"PROLIFIC_PID": pid, "STUDY_ID": secrets.token_hex(12), "SESSION_ID": secrets.token_hex(12)})
        r = await send("GET", f"/s/{slug}/?{query}", None)
        record("GET entry", r.elapsed_ms, r.status)
        _expect(r, 302, "entry")
        if _location(r, step_path)[0] != "step":
            raise FlowError(f"entry redirected to {r.headers.get('location')!r}")
        seen: list[str] = []
        result.pages = seen
        for _ in range(MAX_PAGES_PER_FLOW):
            r = await send("GET", step_path, None)
            if r.status != 200:
                record("GET ?", r.elapsed_ms, r.status)
                _expect(r, 200, f"GET step after {seen[-1:] or ['entry']}")
            page = parse_page(r.body.decode("utf-8", "replace"))
            record(f"GET {page.kind}", r.elapsed_ms, r.status)
            if page.step_and_index in seen:
                raise FlowError(f"page {page.token} shown again after it was submitted (messages: {page.messages!r})")
            seen.append(page.step_and_index)
            data = post_data(page, rng)
            for draft in draft_bodies(page, data, drafts_per_task):
                r = await send("POST", draft_path, form_encode(draft))
                record("POST draft", r.elapsed_ms, r.status)
                _expect(r, 204, f"draft of {page.token}")
            body = form_encode(data)
            r = await send("POST", step_path, body)
            record(f"POST {page.kind}", r.elapsed_ms, r.status)
            _expect(r, 302, f"POST {page.token}")
            where, value = _location(r, step_path)
            if where == "prolific":
                if page.kind != "survey":
                    raise FlowError(f"ended at {page.token} with Prolific code {value!r}")
                if value != completion_code:
                    raise FlowError(f"completion code {value!r}, expected {completion_code!r}")
                expected = expected_sequence(len(seen) - 4)
                if seen != expected:
                    raise FlowError(f"unexpected page sequence {seen} (expected {expected})")
                result.ok = True
                return result
            if where != "step":
                raise FlowError(f"POST {page.token} redirected to {value!r}")
        raise FlowError(f"no completion after {MAX_PAGES_PER_FLOW} pages")
    except FlowError as exc:
        result.error = str(exc)
        return result
