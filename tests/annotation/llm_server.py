"""A small OpenAI-compatible HTTP server that codes answers (``POST /v1/chat/completions``).

It answers with the JSON shape of OpenAI's Chat Completions and structured outputs: the reply's
content is a JSON object with the fields of the request's ``response_format`` schema, coded by a
simple rule from the participant's answer in the prompt (``identified`` when the answer mentions
a woman, she or her). It keeps every request body (for the blinding test), checks the bearer
key, and can be scripted to send broken contents or HTTP errors for the next requests.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = re.compile(r"PARTICIPANT'S ANSWER:\n(.*?)\n\nFIELDS TO CODE:", re.S)


def code_answer(answer: str, fields: list[str]) -> dict:
    """The fake model's label of ``answer``: a fixed rule, so tests know what to expect."""
    text = answer.lower()
    values = {
        "identified": bool(re.search(r"\b(woman|she|her)\b", text)),
        "surface_difference": "name" in text,
        "no_difference": "no difference" in text,
        "tags": [],
        "exclusion": "none",
    }
    return {f: values[f] for f in fields}


class FakeCoder:
    """Server state. ``url`` is the ``OPENAI_BASE_URL``. ``script`` holds what to send for the
    next requests: an int is an HTTP status, a str is the reply content as is (e.g. broken
    JSON); 200 means a normal reply. ``bodies`` keeps every request body; ``served_model`` is the model name returned."""

    def __init__(self, api_key: str, served_model: str = "coder-2026-01-01"):
        self.api_key = api_key
        self.served_model = served_model
        self.script: list[int | str] = []
        self.delay_s = 0.0
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeCoder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("retry-after-ms", "10")
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "Not found"}})
                    return
                body = json.loads(raw or b"{}")
                with server.lock:
                    server.bodies.append(body)
                    step = server.script.pop(0) if server.script else None
                if server.delay_s:
                    time.sleep(server.delay_s)
                if self.headers.get("Authorization", "") != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided."}})
                    return
                if isinstance(step, int) and step >= 400:
                    self._send(step, {"error": {"message": f"scripted {step}", "type": "server_error"}})
                    return
                if isinstance(step, str):
                    content = step
                else:
                    schema = body["response_format"]["json_schema"]["schema"]
                    answer = ANSWER.search(body["messages"][-1]["content"]).group(1)
                    content = json.dumps(code_answer(answer, schema["required"]))
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": server.served_model,
                        "system_fingerprint": "fp_coder_test",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content, "refusal": None},
                                "logprobs": None,
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    },
                )

        return Handler
