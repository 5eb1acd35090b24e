"""Parts of participant pages that are the same for many participants, rendered once per process.

The survey's questions are the costliest part of any participant page to render (50 radio
buttons; docs/performance.md), and on a fresh survey page they depend only on the study's
definition and the order of the participant's conditions. Their HTML is kept per
``(study, definition version, conditions)``; a page showing a refused draft (errors, checked
choices) renders them afresh.
"""
from __future__ import annotations

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from spotlight_study.studies.plan import StudyPlan

from .forms import SurveyForm

# Bounded so that a long-running process editing many study versions cannot grow without end;
# a study has as many entries as orders of its conditions (2 for the reference design).
_MAX_ENTRIES = 256
_SURVEY_RADIOS: dict[tuple, SafeString] = {}


def survey_radios_html(*, plan: StudyPlan, conditions: list[str], form: SurveyForm) -> SafeString:
    """The HTML of the fresh survey's questions (``_survey_radios.html``) for these conditions.

    ``form`` must be the unbound survey form of ``plan`` and ``conditions`` (its
    ``radio_sections()`` are rendered the first time); raises ``ValueError`` for a bound form,
    whose errors and choices are the participant's own.
    """
    if form.is_bound:
        raise ValueError("Only a fresh (unbound) survey form has shared HTML.")
    key = (plan.pk, plan.version, tuple(conditions))
    html = _SURVEY_RADIOS.get(key)
    if html is None:
        if len(_SURVEY_RADIOS) >= _MAX_ENTRIES:
            _SURVEY_RADIOS.clear()
        html = _SURVEY_RADIOS[key] = render_to_string(
            "participation/_survey_radios.html", {"sections": form.radio_sections()}
        )
    return html
