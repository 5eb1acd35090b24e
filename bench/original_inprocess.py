#!/usr/bin/env python
"""The paper's original study app in one process: CPU of its WSGI application per completed
participant flow, with no web server, no network and no other process in the figure (issue 39
§4). The counterpart of ``bench/profile_wsgi.py --database sqlite``, which prints the same
figure for this project ("of which the WSGI application"); run the two in turn, a few times,
for a ratio that the machine's drift between minutes moves less than the uWSGI runs of
``bench/original_compare.py``.

Runs in the original's own virtualenv (Flask and its pins; this script needs only the standard
library and ``bench/original_flow.py``), from its directory, on its SQLite file emptied first:

    cd <the original's code/User study> && venv/bin/flask --app userstudy init-db
    venv/bin/python <this repository>/bench/original_inprocess.py --flows 300

Each request is a WSGI environ handed to ``userstudy.create_app()``'s application, as uWSGI
would; the participant is ``bench.original_flow.participant`` (start link, forms, 307 re-posts).
The original prints debugging lines on every arrival; they go to this process's standard
output, as they go to uWSGI's log when it is served, so send them to /dev/null. The figures are
printed on standard error.

``--idle-us N`` sleeps N µs before each request, outside the measured CPU, as
``bench/profile_wsgi.py --idle-us`` does for this project (docs/benchmarks.md: on a virtual
machine a request after an idle gap costs more CPU).
"""
from __future__ import annotations

import argparse
import io
import os
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # import bench.original_flow


def main() -> int:
    """Warm up, then time ``--flows`` flows; print CPU per flow (ms) on standard error."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--idle-us", type=float, default=0.0, help="sleep this many µs before each request (default 0)")
    ap.add_argument("--app-dir", default=".", help="the directory holding the original's package `userstudy`")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.app_dir))
    from userstudy import create_app

    from bench.original_flow import participant

    app = create_app()
    app_cpu = [0.0, 0]  # CPU seconds inside the application, requests

    def call(method: str, target: str, body: bytes | None) -> tuple[int, str, str]:
        path, _, query = target.partition("?")
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body or b""), "wsgi.errors": sys.stderr, "wsgi.multithread": False,
            "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
        }
        if body is not None:
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
            environ["CONTENT_LENGTH"] = str(len(body))
        captured: dict = {}

        def start_response(status, headers, exc_info=None):
            captured["status"] = int(status.split()[0])
            captured["location"] = dict(headers).get("Location", "")

        if args.idle_us > 0:
            time.sleep(args.idle_us / 1e6)
        c0 = time.process_time()
        chunks = app(environ, start_response)
        out = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        app_cpu[0] += time.process_time() - c0
        app_cpu[1] += 1
        return captured["status"], captured["location"], out.decode("utf-8", "replace")

    def one_flow(pid: str) -> None:
        flow = participant(pid)
        request = next(flow)
        while True:
            try:
                request = flow.send(call(*request))
            except StopIteration:
                return

    tag = secrets.token_hex(4)
    for i in range(args.warmup):
        one_flow(f"warm{tag}{i:06d}")
    app_cpu[:] = [0.0, 0]
    c0 = time.process_time()
    for i in range(args.flows):
        one_flow(f"inproc{tag}{i:06d}")
    total = (time.process_time() - c0) / args.flows * 1000
    print(f"original in process: {args.flows} flows; per flow {total:.2f} ms CPU of this process (driver included), "
          f"of which the WSGI application {app_cpu[0] / args.flows * 1000:.2f} ms; "
          f"{app_cpu[1] / args.flows:.1f} requests per flow"
          + (f"; idle {args.idle_us:g} µs before each request" if args.idle_us > 0 else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
