"""What differs between the suite's parallel workers (pytest-xdist): resources two workers must
not share, such as a Redis database that a test empties.

Outside xdist (a plain ``pytest`` run) the worker index is 0, so every resource is what it was
before the suite ran in parallel.
"""
from __future__ import annotations

import os


def worker_index() -> int:
    """This process's xdist worker number (``gw3`` gives 3); 0 when the suite is not parallel."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    digits = name.removeprefix("gw")
    return int(digits) if digits.isdigit() else 0


def redis_test_db() -> int:
    """The shared Redis's database number for this worker's tests: 15, 14, ... (the last ones,
    away from the 0 and 1 a development server uses). A test may empty it (``flushdb``, a
    Redis cache's ``clear()``) without touching another worker's queue or counters."""
    return 15 - worker_index() % 14


def redis_test_url() -> str:
    """``TEST_REDIS_URL`` if set, else the Redis on 127.0.0.1 at :func:`redis_test_db`: port 6379,
    or ``TEST_REDIS_PORT`` where two checkouts run their suites at once on one machine (each then
    starts a redis-server of its own on that port, so neither empties the other's databases)."""
    port = os.environ.get("TEST_REDIS_PORT") or "6379"
    return os.environ.get("TEST_REDIS_URL") or f"redis://127.0.0.1:{port}/{redis_test_db()}"
