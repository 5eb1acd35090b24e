"""A bounded per-process memo of pure statistics calls, keyed by the exact content of their
array inputs.

The annotation overview computes some thirty agreement statistics over up to 30,000 items after
each label change, and many of those library calls get exactly the inputs of an earlier call:
with two annotators the pair's kappa and alpha are computed on the same arrays as the
all-annotator row's, and a label change leaves the inputs of every other setting's statistics
as they were. scikit-learn's and NLTK's functions are deterministic, so equal inputs
give equal results, and the memo answers those calls without running them again (issue 11).
:func:`~.agreement.coded_agreement` is memoized as a whole too (by its coded ratings), so a
scope whose labels did not change costs a digest, not three statistics.

The key is the BLAKE2b digest (32 bytes) of each array's dtype, shape and bytes, so any change of
any value is another key: nothing can be stale and nothing needs invalidating. The memo holds at
most :data:`MAX_ENTRIES` results (the oldest used go first), a few kB.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

#: Results kept per process (a 10,000-participant study's overview makes about 70 entries).
MAX_ENTRIES = 512

T = TypeVar("T")

_results: OrderedDict[tuple, Any] = OrderedDict()
_lock = threading.Lock()


def array_key(*arrays: np.ndarray) -> bytes:
    """BLAKE2b digest of the arrays' dtypes, shapes and contents, in order."""
    h = hashlib.blake2b(digest_size=32)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape};".encode())
        h.update(a.tobytes())
    return h.digest()


def memoized(name: str, arrays: tuple[np.ndarray, ...], compute: Callable[[], T]) -> T:
    """``compute()``, or its earlier result for the same ``name`` and ``arrays``.

    Parameters
    ----------
    name : str
        What ``compute`` computes (e.g. ``"cohen_kappa_score"``): results of different
        functions never share a key.
    arrays : tuple of ndarray
        Every input of ``compute``: it must depend on nothing else.
    compute : callable
        A deterministic function of ``arrays`` whose result is immutable (a float, a frozen
        dataclass): callers share it.

    Returns
    -------
    object
        What ``compute()`` returns (or returned for equal inputs).
    """
    key = (name, array_key(*arrays))
    with _lock:
        if key in _results:
            _results.move_to_end(key)
            return _results[key]
    value = compute()
    with _lock:
        _results[key] = value
        while len(_results) > MAX_ENTRIES:
            _results.popitem(last=False)
    return value


def clear() -> None:
    """Forget every result (tests)."""
    with _lock:
        _results.clear()
