"""A small OpenAI-compatible HTTP server for the tests (``POST /v1/chat/completions``).

It answers like a real server (same JSON shape as OpenAI's Chat Completions), checks the bearer
key, can be scripted to answer the next requests with errors (e.g. one 429), can wait before
answering, and counts every request. The texts are short doctor stories whose pronouns follow the
name in the prompt ("Li" -> she/her, otherwise he/his), so that mining finds a known pattern.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOBBIES = ["chess", "gardening", "running", "painting", "cooking", "hiking", "reading", "music"]


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


class FakeOpenAI:
    """The server state. Use ``url`` as ``OPENAI_BASE_URL``; ``script`` holds HTTP statuses to
    answer the next requests with (e.g. ``[429]``); ``delay_s`` delays every answer."""

    def __init__(self, api_key: str):
        self.api_key = api_key
        self.script: list[int] = []
        self.delay_s = 0.0
        self.lock = threading.Lock()
        self.count = 0
        self.statuses: list[int] = []
        self.bodies: list[dict] = []
        self.auth_headers: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_status(self) -> int:
        with self.lock:
            self.count += 1
            status = self.script.pop(0) if self.script else 200
            self.statuses.append(status)
            return status

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:12]}")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "Not found", "type": "invalid_request_error"}})
                    return
                body = json.loads(raw or b"{}")
                auth = self.headers.get("Authorization", "")
                with server.lock:
                    server.bodies.append(body)
                    server.auth_headers.append(auth)
                status = server._next_status()
                if server.delay_s:
                    time.sleep(server.delay_s)
                if auth != f"Bearer {server.api_key}":
                    given = auth.removeprefix("Bearer ")
                    # Real servers echo (part of) the key they got; the platform must hide it.
                    self._send(
                        401,
                        {"error": {"message": f"Incorrect API key provided: {given}.", "type": "invalid_request_error", "code": "invalid_api_key"}},
                    )
                    return
                if status == 429:
                    self._send(
                        429,
                        {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}},
                        headers={"retry-after-ms": "20"},
                    )
                    return
                if status >= 500:
                    self._send(status, {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}, headers={"retry-after-ms": "20"})
                    return
                prompt = body["messages"][-1]["content"]
                text = story(prompt, body.get("seed"))
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake-model"),
                        "system_fingerprint": "fp_test",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text, "refusal": None},
                                "logprobs": None,
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 12, "completion_tokens": len(text.split()), "total_tokens": 12 + len(text.split())},
                    },
                )

        return Handler
