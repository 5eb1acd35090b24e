"""An HTTP server in a thread of the test process: the fakes of Prolific, OpenAI and Sentry.

One helper for what three fakes spelled out for themselves. It polls for shutdown every 20 ms,
not the standard library's 500 ms: ``shutdown()`` waits for the next poll, and with one fake per
test the default cost the suite about 70 s of waiting in teardowns (docs/testing.md).
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Seconds between the serving loop's checks for a shutdown request.
POLL_INTERVAL_S = 0.02


class ThreadServer:
    """``handler`` served on a free port of 127.0.0.1 by a daemon thread, one thread a request.

    ``start()`` serves (and returns ``self``); ``stop()`` stops within :data:`POLL_INTERVAL_S`
    and frees the port. ``port`` and ``origin`` (``http://127.0.0.1:PORT``) are known as soon as
    the object exists, before ``start()``.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        """Bind a free port for ``handler`` (a request handler class); serves nothing yet."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, daemon=True
        )

    @property
    def port(self) -> int:
        """The bound port number."""
        return self.httpd.server_address[1]

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ThreadServer":
        """Serve in the daemon thread; returns ``self``. ``RuntimeError`` if called twice."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (within :data:`POLL_INTERVAL_S`) and free the port. Safe when ``start()``
        was never called: ``shutdown()`` would wait forever for a loop that never ran."""
        if self._thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
