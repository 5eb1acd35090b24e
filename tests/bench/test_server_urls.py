"""bench/server.py drops and re-creates only databases on this machine."""
from __future__ import annotations

import sys

import pytest

from ..conftest import REPO

sys.path.insert(0, str(REPO))
from bench.server import is_local_database  # noqa: E402


@pytest.mark.parametrize("url", [
    "postgres://postgres@127.0.0.1:5432/spotlight_bench",
    "postgres://postgres@localhost/spotlight_bench",
    "postgres://postgres@/spotlight_bench_sock?host=/var/run/postgresql",
])
def test_local_hosts_and_unix_sockets_count_as_local(url):
    assert is_local_database(url)


@pytest.mark.parametrize("url", [
    "postgres://postgres@db.example.org:5432/spotlight_bench",
    "postgres://postgres@/spotlight_bench?host=db.example.org",
    "postgres://postgres@10.0.0.5/spotlight_bench",
    "postgres://postgres@/spotlight_bench",  # no host: PGHOST decides, which may be anywhere
])
def test_other_hosts_do_not(url):
    assert not is_local_database(url)
