"""The quality-flag keys a study file may name, as told by the participation app.

The flags are defined in :mod:`spotlight_study.participation.flags`, an app above this one. So
that the dependency keeps pointing one way (``studies <- participation``), participation
registers its keys and its default holding flags when Django starts
(``ParticipationConfig.ready``); the study-file schema and the ``Study`` model's default ask
here. Before anything is registered (a bare import, no Django start) both are empty.
"""
from __future__ import annotations

from collections.abc import Iterable

_KEYS: list[str] = []
_HOLDING_DEFAULTS: list[str] = []


def flag_keys_register(*, keys: Iterable[str], holding_defaults: Iterable[str]) -> None:
    """Set the known flag keys (in their listing order) and the default holding flags.

    Registering again replaces both (``ready()`` may run more than once in tests). Raises
    ``ValueError`` if a default is not one of ``keys``.
    """
    keys, defaults = list(keys), list(holding_defaults)
    unknown = [d for d in defaults if d not in keys]
    if unknown:
        raise ValueError(f"Default holding flags that are no flag: {', '.join(unknown)}.")
    _KEYS[:] = keys
    _HOLDING_DEFAULTS[:] = defaults


def known_flag_keys() -> tuple[str, ...]:
    """Every flag key, in the order the flags are listed everywhere."""
    return tuple(_KEYS)


def default_holding_flags() -> list[str]:
    """The flags that hold a submission back from bulk approval when the study file names none
    (a new list each call: it is a model field's default)."""
    return list(_HOLDING_DEFAULTS)
