"""A tiny tmpfs that tests fill up, for a real full disk (``OSError`` ``ENOSPC``).

Mounting needs root (CAP_SYS_ADMIN), as CI runs; elsewhere :func:`tiny_tmpfs` skips the test
(and fails it when ``CI=true``). The file system is only as large as asked (64 KiB by default),
so filling it writes almost nothing.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .processes import run_command

FILLER = ".filler"


@contextmanager
def tiny_tmpfs(path: Path, *, size_kib: int = 64) -> Iterator[Path]:
    """Mount a tmpfs of ``size_kib`` KiB at ``path`` (created if missing) for the ``with``
    block, then unmount it (lazily, so that a server still holding a file does not keep it).

    Skips the test when the mount is refused (not root), or fails it when ``CI=true``.
    """
    path.mkdir(parents=True, exist_ok=True)
    mounted = run_command(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=1777", "tmpfs", str(path)],
                          cwd=None, timeout=30)
    if mounted.returncode != 0:
        message = f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield path
    finally:
        run_command(["umount", "-l", str(path)], cwd=None, timeout=30)


def fill(path: Path) -> int:
    """Write zeros to ``path``/.filler until the file system says ``ENOSPC``; return the bytes
    written. Raises AssertionError if it never fills (``path`` is not a small file system)."""
    written = 0
    chunk = b"\0" * 4096
    with open(path / FILLER, "ab", buffering=0) as filler:
        for _ in range(1 << 16):  # at most 256 MiB: far past any tiny tmpfs
            try:
                written += filler.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
        else:
            raise AssertionError(f"{path} did not fill up after {written} bytes")
    # A last small write, so that not even a partial block is left.
    try:
        with open(path / FILLER, "ab", buffering=0) as filler:
            while filler.write(b"\0"):
                pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    return written


def free(path: Path) -> None:
    """Remove what :func:`fill` wrote: the file system has room again."""
    (path / FILLER).unlink(missing_ok=True)
