"""The participant pages speak the study's language (the study file's ``language``).

The language comes from the study, never from the browser's ``Accept-Language``: a study runs
in the language its texts are written in. The views activate it around the work of a request
(:func:`study_language`), so the platform's strings, ``<html lang>``/``dir`` (Django's
``get_current_language``/``get_current_language_bidi``), numbers and dates follow it; staff
pages keep the default (``LANGUAGE_CODE``). Activating a language costs no query: its catalog
is loaded once per process.

A request that fails after the study is known keeps its language for the error page: the
views note it on the request (:data:`REQUEST_ATTRIBUTE`), where the error handlers of
:mod:`spotlight_study.errors` read it. An address under ``/s/<slug>/`` that no view answers
(a 404 before any view ran) gets the study's language from :func:`language_of_study_path`,
which this app registers with the error handlers.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from django.http import HttpRequest
from django.utils import translation

from spotlight_study.errors import STUDY_LANGUAGE_ATTRIBUTE as REQUEST_ATTRIBUTE
from spotlight_study.studies.models import Study
from spotlight_study.studies.plan import StudyPlan, study_plan_for_slug

#: The study slug of a participant URL: ``/s/<slug>/...`` (the pattern of ``urls.py``'s ``<slug:slug>``).
_STUDY_PATH = re.compile(r"^/s/(?P<slug>[-a-zA-Z0-9_]+)(?:/|$)")


@contextmanager
def study_language(request: HttpRequest, plan: StudyPlan | Study) -> Iterator[str]:
    """Activate the language of ``plan`` (a compiled plan or a ``Study``) for the block, and
    note it on ``request`` for an error page; yields the language code. The previous language
    is restored afterwards."""
    setattr(request, REQUEST_ATTRIBUTE, plan.language)
    with translation.override(plan.language):
        yield plan.language


def language_of_study_path(path: str) -> str | None:
    """The language code of the study that ``path`` (``/s/<slug>/...``) belongs to, or ``None``
    for another path or an unknown slug. One query (the compiled plan's id and version)."""
    match = _STUDY_PATH.match(path)
    if match is None:
        return None
    plan = study_plan_for_slug(match["slug"])
    return plan.language if plan is not None else None
