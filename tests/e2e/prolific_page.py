"""Prolific's completion page for the browser tests, served over HTTPS on 127.0.0.1.

A participant who finishes is redirected (302) to ``https://app.prolific.com/submissions/
complete?cc=CODE``. There is no internet here, so the browser is told that app.prolific.com is
this server (Chromium's ``--host-resolver-rules``) and to accept this server's own certificate,
and no other (``--ignore-certificate-errors-spki-list`` with the hash of its public key).

Why not Playwright's ``page.route``: it does not see a navigation that a redirect sends to
another site. Debian's headless shell (the browser the tests use) fails such a navigation with
``net::ERR_NAME_NOT_RESOLVED``; the full Chromium failed it too and only reached the route when
it retried the navigation in a new renderer.
"""
from __future__ import annotations

import base64
import hashlib
import ssl
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from ..local_http import ThreadServer
from ..processes import run_command

#: The host the completion URL names (``PROLIFIC_COMPLETE_URL`` in settings.py).
PROLIFIC_HOST = "app.prolific.com"
#: What the page says; a test may look for it.
PAGE = b"<!doctype html><title>Prolific</title><h1>Submission complete</h1>"


class _CompletionPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the standard library's name
        pass


@dataclass
class CompletionServer:
    """The running server and the Chromium switches that make ``https://app.prolific.com`` it."""

    server: ThreadServer
    spki_sha256: str

    @property
    def chromium_args(self) -> list[str]:
        """Switches for ``chromium.launch(args=...)``: the host mapped to this server's port,
        and its certificate (by public key) accepted."""
        return [
            f"--host-resolver-rules=MAP {PROLIFIC_HOST} 127.0.0.1:{self.server.port}",
            f"--ignore-certificate-errors-spki-list={self.spki_sha256}",
        ]

    def stop(self) -> None:
        """Stop serving and free the port."""
        self.server.stop()


def start_completion_server(directory: Path) -> CompletionServer:
    """Make a self-signed certificate for :data:`PROLIFIC_HOST` in ``directory`` (with
    Debian's ``openssl``) and serve :data:`PAGE` over HTTPS with it on a free port.

    Raises ``RuntimeError`` with openssl's output if the certificate cannot be made, and
    ``FileNotFoundError`` if ``openssl`` is not installed.
    """
    key, cert = directory / "prolific-key.pem", directory / "prolific-cert.pem"
    made = run_command(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", f"/CN={PROLIFIC_HOST}", "-addext", f"subjectAltName=DNS:{PROLIFIC_HOST}",
                        "-keyout", str(key), "-out", str(cert)], merge_stderr=True)
    if made.returncode != 0:
        raise RuntimeError(f"openssl could not make the test certificate:\n{made.stdout}")
    # Chromium's SPKI list takes base64(SHA-256(DER SubjectPublicKeyInfo)).
    # The PEM form is that DER in base64 between two marker lines.
    public = run_command(["openssl", "pkey", "-in", str(key), "-pubout"], merge_stderr=True)
    if public.returncode != 0:
        raise RuntimeError(f"openssl could not read the test key:\n{public.stdout}")
    der = base64.b64decode("".join(line for line in public.stdout.splitlines() if not line.startswith("-----")))
    spki = base64.b64encode(hashlib.sha256(der).digest()).decode()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadServer(_CompletionPage)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    return CompletionServer(server=server.start(), spki_sha256=spki)
