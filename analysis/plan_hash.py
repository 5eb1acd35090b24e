"""A preregistered plan's canonical form and its SHA-256: the fingerprint a report cites.

``manage.py preregister`` stores a plan as :func:`canonical_json` with its :func:`plan_sha256`;
``manage.py analyze`` recomputes the hash of what is stored and refuses to cite a plan whose
content no longer matches it (:func:`plan_verified`). Pure Python: no Django.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from .errors import PlanIntegrityError

__all__ = ["canonical_json", "plan_sha256", "plan_verified"]


def canonical_json(value) -> bytes:
    """The canonical serialisation a plan's hash is computed over.

    Parameters
    ----------
    value : JSON-compatible object
        Dicts, lists, strings, finite numbers, booleans and None.

    Returns
    -------
    bytes
        UTF-8 JSON with keys sorted at every level, ``","`` and ``":"`` as
        separators and no other whitespace; non-ASCII characters are kept as
        is (not ``\\u`` escaped).

    Raises
    ------
    ValueError
        If ``value`` holds NaN or an infinite float (not valid JSON).
    TypeError
        If ``value`` holds an object JSON cannot represent.

    Notes
    -----
    The same rules as the JSON Canonicalization Scheme for key order and
    whitespace; numbers are written by Python's ``json`` module, which is
    stable for the integers and short decimals a plan holds.

    References
    ----------
    .. [1] RFC 8785, *JSON Canonicalization Scheme (JCS)*.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [True, None]})
    b'{"a":[true,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def plan_sha256(plan: Mapping) -> str:
    """SHA-256 of the canonical JSON of ``plan``, as 64 lowercase hex digits.

    Parameters
    ----------
    plan : Mapping
        A plan (or any JSON-compatible mapping, e.g. a study definition).

    Returns
    -------
    str
        ``hashlib.sha256(canonical_json(plan)).hexdigest()``.

    Raises
    ------
    ValueError, TypeError
        As :func:`canonical_json`.

    Notes
    -----
    Key order and indentation of a ``plan.json`` file do not change the
    hash; any change of a value does.

    References
    ----------
    .. [1] NIST FIPS 180-4, *Secure Hash Standard*.

    Examples
    --------
    >>> plan_sha256({"a": 1}) == plan_sha256({"a": 1})
    True
    """
    return hashlib.sha256(canonical_json(plan)).hexdigest()


def plan_verified(canonical_text: str, stored_sha256: str, *, source: str = "the plan") -> dict:
    """The plan stored as ``canonical_text``, checked against the hash recorded with it.

    Parameters
    ----------
    canonical_text : str
        The plan's canonical JSON as stored when it was preregistered (UTF-8 text).
    stored_sha256 : str
        The SHA-256 recorded at the same time (64 hex digits).
    source : str
        How to name the plan in the message (e.g. ``"plan v2 of spotlight-replication"``).

    Returns
    -------
    dict
        The parsed plan, whose :func:`plan_sha256` equals ``stored_sha256``.

    Raises
    ------
    PlanIntegrityError
        If the text is not JSON, is not in canonical form, or hashes to another value than
        ``stored_sha256``: the plan was changed after it was frozen. The message gives both
        hashes.

    Notes
    -----
    The hash is taken over the stored bytes themselves (``sha256(canonical_text)``) and over
    the re-serialised plan; both must match, so neither an edited value nor a re-indented
    copy passes.

    Examples
    --------
    >>> text = canonical_json({"a": 1}).decode()
    >>> plan_verified(text, plan_sha256({"a": 1}))
    {'a': 1}
    """
    actual = hashlib.sha256(canonical_text.encode("utf-8")).hexdigest()
    try:
        plan = json.loads(canonical_text)
        recomputed = plan_sha256(plan)
    except (ValueError, TypeError) as exc:
        raise PlanIntegrityError(
            f"{source} is no longer valid JSON ({exc}); it was changed after it was "
            f"preregistered with SHA-256 {stored_sha256}."
        ) from None
    if actual != stored_sha256 or recomputed != stored_sha256:
        raise PlanIntegrityError(
            f"{source} was changed after it was frozen: it was preregistered with SHA-256 "
            f"{stored_sha256}, but what is stored now hashes to {actual}. A report cannot cite "
            "it; register the intended plan as a new version (manage.py preregister, with a "
            "reason) or restore the original."
        )
    return plan
