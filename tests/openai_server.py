"""Small OpenAI-compatible HTTP servers for the tests (``POST /v1/chat/completions``).

They answer like a real server (the JSON shape of OpenAI's Chat Completions), check the bearer
key (a wrong key gets a 401 that echoes it, as real servers do; the platform must hide it), can
be scripted to answer the next requests with HTTP errors or given contents, can wait before
answering, and keep every request. Two fake models share the plumbing of :class:`FakeChatServer`:

- :class:`FakeOpenAI` (generation, ``tests/stimuli``): short doctor stories whose pronouns follow
  the name in the prompt ("Li" -> she/her, otherwise he/his), so that mining finds a known pattern;
- :class:`FakeCoder` (the machine coder, ``tests/annotation``): structured outputs, a JSON object
  with the fields of the request's ``response_format`` schema, coded by a fixed rule.
"""
from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler

from .local_http import ThreadServer

HOBBIES = ["chess", "gardening", "running", "painting", "cooking", "hiking", "reading", "music"]
ANSWER = re.compile(r"PARTICIPANT'S ANSWER:\n(.*?)\n\nFIELDS TO CODE:", re.S)
#: The default codebook's fields (and exclusion), coded by :func:`code_answer`.
DEFAULT_FIELDS = ("identified", "surface_difference", "no_difference", "tags", "exclusion")
#: The writing-process flags the machine coder is given as evidence for ``exclusion``.
EVIDENCE = re.compile(r"WRITING-PROCESS EVIDENCE \(for the exclusion field only[^)]*\): ([^\n]*)\n")


class FakeChatServer:
    """The server state and HTTP plumbing; subclasses say what the model answers.

    ``url`` is the ``OPENAI_BASE_URL``. ``script`` holds what to send for the next requests: an
    int is an HTTP status (200: a normal reply; 429: a rate limit; other >= 400: a server
    error), a str is the reply's content as is (e.g. broken JSON). ``delay_s`` delays every
    answer. ``count``, ``statuses``, ``bodies`` and ``auth_headers`` record every request.

    ``hold(after=n)`` answers the first ``n`` requests and keeps every later one waiting until
    ``release()``: a test can then act "mid-job" (cancel, kill, a second runner) at a point that
    does not depend on how fast the machine is, where a delay per answer only makes it likely.
    """

    #: ``system_fingerprint`` of every reply.
    fingerprint = "fp_test"

    def __init__(self, api_key: str, *, retry_after_ms: int = 20):
        self.api_key = api_key
        self.retry_after_ms = retry_after_ms
        self.script: list[int | str] = []
        self.delay_s = 0.0
        self.lock = threading.Lock()
        self.count = 0
        self.statuses: list[int] = []
        self.bodies: list[dict] = []
        self.auth_headers: list[str] = []
        self._hold_after: int | None = None
        self._released = threading.Event()
        self._released.set()
        self._server = ThreadServer(self._handler())

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"{self._server.origin}/v1"

    def start(self):
        """Serve in a daemon thread; returns ``self``."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (held answers are let go first)."""
        self.release()
        self._server.stop()

    def hold(self, *, after: int = 0) -> None:
        """Answer requests up to the ``after``-th (counted over the server's life) and hold every
        later one, unanswered, until :meth:`release`."""
        with self.lock:
            self._hold_after = after
            self._released.clear()

    def release(self) -> None:
        """Let every held request (and every later one) be answered."""
        with self.lock:
            self._hold_after = None
            self._released.set()

    def held(self) -> int:
        """How many requests are past the hold point (waiting, or answered after a release)."""
        with self.lock:
            return 0 if self._hold_after is None else max(0, self.count - self._hold_after)

    def content(self, body: dict) -> str:
        """The assistant's text for the request ``body`` (a normal reply)."""
        raise NotImplementedError

    def model_name(self, body: dict) -> str:
        """The ``model`` the reply names (default: the one asked for)."""
        return body.get("model", "fake-model")

    def usage(self, text: str) -> dict:
        """The reply's token counts."""
        completion = len(text.split())
        return {"prompt_tokens": 12, "completion_tokens": completion, "total_tokens": 12 + completion}

    def _record(self, body: dict, auth: str) -> tuple[int | str, bool]:
        """Keep the request; the scripted step for it (200 when the script is empty), and
        whether it must wait for :meth:`release`."""
        with self.lock:
            self.count += 1
            self.bodies.append(body)
            self.auth_headers.append(auth)
            step = self.script.pop(0) if self.script else 200
            self.statuses.append(step if isinstance(step, int) else 200)
            return step, self._hold_after is not None and self.count > self._hold_after

    def completion(self, body: dict, content: str) -> dict:
        """A Chat Completion with ``content`` as the one choice's message."""
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name(body),
            "system_fingerprint": self.fingerprint,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": self.usage(content),
        }

    def answer(self, body: dict, auth: str) -> tuple[int, dict]:
        """``(status, payload)`` for one request (after it was recorded and delayed)."""
        step, held = self._record(body, auth)
        if held:
            self._released.wait(timeout=300)  # a hang guard only: the test releases it
        if self.delay_s:
            time.sleep(self.delay_s)
        if auth != f"Bearer {self.api_key}":
            given = auth.removeprefix("Bearer ")
            error = {"message": f"Incorrect API key provided: {given}.", "type": "invalid_request_error",
                     "code": "invalid_api_key"}
            return 401, {"error": error}
        if step == 429:
            error = {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}
            return 429, {"error": error}
        if isinstance(step, int) and step >= 400:
            return step, {"error": {"message": "The server had an error while processing your request.",
                                    "type": "server_error"}}
        return 200, self.completion(body, step if isinstance(step, str) else self.content(body))

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:12]}")
                if status == 429 or status >= 500:
                    self.send_header("retry-after-ms", str(server.retry_after_ms))
                try:
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client was killed while its request was held

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "Not found", "type": "invalid_request_error"}})
                    return
                body = json.loads(raw or b"{}")
                self._send(*server.answer(body, self.headers.get("Authorization", "")))

        return Handler


def story(prompt: str, seed: int | None) -> str:
    """The deterministic story the fake model tells for ``prompt`` and ``seed``."""
    female = " Li" in prompt or "Dr. Li" in prompt or "Dr.Li" in prompt
    name = "Li" if female else "Smith"
    sub, pos = ("She", "her") if female else ("He", "his")
    s = seed if seed is not None else 0
    hobby = HOBBIES[s % len(HOBBIES)]
    return (
        f"Dr. {name} starts the day at the clinic. {sub} checks on {pos} patients, "
        f"then spends the evening on {hobby} (story {s})."
    )


class FakeOpenAI(FakeChatServer):
    """A generation model: the reply is :func:`story` of the last message and the seed."""

    def content(self, body: dict) -> str:
        return story(body["messages"][-1]["content"], body.get("seed"))


def code_answer(answer: str, fields: list[str], evidence: str = "") -> dict:
    """The fake coder's label of ``answer``: a fixed rule, so tests know what to expect
    (``identified`` when the answer mentions a woman, she or her; ``exclusion``
    ``ai_generated`` when the writing-process ``evidence`` has ``typed_implausibly_fast``)."""
    text = answer.lower()
    values = {
        "identified": bool(re.search(r"\b(woman|she|her)\b", text)),
        "surface_difference": "name" in text,
        "no_difference": "no difference" in text,
        "tags": [],
        "exclusion": "ai_generated" if "typed_implausibly_fast" in evidence else "none",
    }
    return {f: values[f] for f in fields}


def code_declared(answer: str, prop: dict) -> object:
    """The fake coder's value of a declared codebook field, from its schema property ``prop``:
    a yes/no is :func:`code_answer`'s ``identified``; an option list (lowest first) its last
    option for such an answer and its first otherwise; a list the options the answer names
    (ignoring case); a number its minimum (or 0)."""
    hit = code_answer(answer, ["identified"])["identified"]
    kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    if "boolean" in kinds:
        return hit
    if "array" in kinds:
        options = prop["items"].get("enum", [])
        return [o for o in options if o.casefold() in answer.casefold()]
    if "string" in kinds:
        options = [o for o in prop["enum"] if o is not None]
        return options[-1] if hit else options[0]
    return prop.get("minimum", 0)


class FakeCoder(FakeChatServer):
    """A coding model with structured outputs: the reply is :func:`code_answer` of the
    participant's answer in the prompt, with the schema's required fields. Every reply names
    ``served_model`` and uses 100 prompt and 20 completion tokens."""

    fingerprint = "fp_coder_test"

    def __init__(self, api_key: str, served_model: str = "coder-2026-01-01"):
        super().__init__(api_key, retry_after_ms=10)
        self.served_model = served_model

    def content(self, body: dict) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        prompt = body["messages"][-1]["content"]
        answer = ANSWER.search(prompt).group(1)
        evidence = EVIDENCE.search(prompt)
        default = [f for f in schema["required"] if f in DEFAULT_FIELDS]
        reply = code_answer(answer, default, evidence.group(1) if evidence else "")
        for name in schema["required"]:
            if name not in DEFAULT_FIELDS:  # a declared codebook's field
                reply[name] = code_declared(answer, schema["properties"][name])
        return json.dumps({name: reply[name] for name in schema["required"]})

    def model_name(self, body: dict) -> str:
        return self.served_model

    def usage(self, text: str) -> dict:
        return {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
