"""The participant pages speak the study's language (the study file's ``language``).

The language comes from the study, never from the browser's ``Accept-Language``: a study runs
in the language its texts are written in. The views activate it around the work of a request
(:func:`study_language`), so the platform's strings, ``<html lang>``/``dir`` (Django's
``get_current_language``/``get_current_language_bidi``), numbers and dates follow it; staff
pages keep the default (``LANGUAGE_CODE``). Activating a language costs no query: its catalog
is loaded once per process.

A request that fails after the study is known keeps its language for the error page: the
views note it on the request (:data:`REQUEST_ATTRIBUTE`), where the error handlers of
:mod:`spotlight_study.errors` read it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from django.http import HttpRequest
from django.utils import translation

from spotlight_study.errors import STUDY_LANGUAGE_ATTRIBUTE as REQUEST_ATTRIBUTE
from spotlight_study.studies.models import Study
from spotlight_study.studies.plan import StudyPlan


@contextmanager
def study_language(request: HttpRequest, plan: StudyPlan | Study) -> Iterator[str]:
    """Activate the language of ``plan`` (a compiled plan or a ``Study``) for the block, and
    note it on ``request`` for an error page; yields the language code. The previous language
    is restored afterwards."""
    setattr(request, REQUEST_ATTRIBUTE, plan.language)
    with translation.override(plan.language):
        yield plan.language
