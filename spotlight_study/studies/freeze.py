"""Whether a study's definition is frozen because real participants have seen it.

Who has taken part is known only to the participation app, which depends on this one. So that
the dependency keeps pointing one way (``studies <- participation``), this module holds a small
registry: participation registers its check when Django starts
(``ParticipationConfig.ready``), and the studies admin and import ask :func:`study_freeze_reason`
without importing participation.
"""
from __future__ import annotations

from typing import Callable

from .models import Study

FreezeCheck = Callable[[Study], "str | None"]

_CHECKS: list[FreezeCheck] = []

# How to change a frozen study: a copy under a new slug is a new version with its own cells.
# The file comes from export_study, because the original file lacks what was built or edited
# in the browser (settings from the Stimuli pages, admin edits).
COPY_HINT = (
    "To change it, make a new version: write its study file with `manage.py export_study "
    "{slug} --out FILE` (it includes settings built on the Stimuli pages and admin edits), "
    "edit that file and import it under a new slug "
    "(`manage.py import_study FILE --as-slug NEW-SLUG`), then launch that study instead."
)


def freeze_check_register(check: FreezeCheck) -> None:
    """Add a check: ``check(study)`` returns why the study is frozen, or ``None``.

    Registering the same function twice has no effect (``ready()`` may run more than once in
    tests).
    """
    if check not in _CHECKS:
        _CHECKS.append(check)


def study_freeze_reason(*, study: Study) -> str | None:
    """Why ``study`` is frozen (the first registered check that says so), or ``None``."""
    for check in _CHECKS:
        reason = check(study)
        if reason:
            return reason
    return None


def frozen_message(*, study: Study, reason: str) -> str:
    """The refusal shown by the admin and the import: what froze the study and how to copy it."""
    hint = COPY_HINT.format(slug=study.slug)
    return f"Study '{study.slug}' is frozen: {reason} Its definition cannot change. {hint}"
