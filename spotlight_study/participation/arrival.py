"""Which Prolific study an arrival must come from, asked of the apps that know.

A study here may be linked to a study on Prolific; the link is kept by the prolific app, which
depends on this one. So that the dependency keeps pointing one way
(``participation <- prolific``), this module holds a small registry: the prolific app registers
its source when Django starts (``ProlificConfig.ready``), and :func:`assignment.assignment_create`
asks :func:`expected_study_ids` without importing prolific.
"""
from __future__ import annotations

from typing import Callable, Iterable

from spotlight_study.studies.models import Study

ExpectedStudyIds = Callable[[Study], Iterable[str]]

_SOURCES: list[ExpectedStudyIds] = []


def expected_study_ids_register(source: ExpectedStudyIds) -> None:
    """Add a source: ``source(study)`` gives the Prolific study ids (24 hex characters) that
    an arrival's ``STUDY_ID`` may carry, or nothing when the study is not linked.

    Registering the same function twice has no effect (``ready()`` may run more than once).
    """
    if source not in _SOURCES:
        _SOURCES.append(source)


def expected_study_ids(*, study: Study) -> frozenset[str]:
    """Every ``STUDY_ID`` an arrival in ``study`` may carry; empty means any (not linked)."""
    ids: set[str] = set()
    for source in _SOURCES:
        ids.update(i for i in source(study) if i)
    return frozenset(ids)
