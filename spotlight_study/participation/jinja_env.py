"""The Jinja2 environment of the participant step pages (``participation/jinja2/``).

The pages a participant sees at every step (consent, instructions, the training and main tasks,
the survey, the end pages) are Jinja2 templates; everything else (staff pages, error pages, the
entry's refusal pages) stays in Django's template language. Measured on this 2-core machine, the
same task page with the same context took 276 µs to render in Django's template language and
109 µs in Jinja2, csrf token and context processor included (docs/performance.md, part 6): about
1 ms of the 20-25 ms of server CPU a participant flow costs.

Django's Jinja2 backend gives the templates ``request``, ``csrf_input`` and ``csrf_token``, and
escapes every value that is not marked safe, as Django's templates do. This environment adds:

- ``static_once(path)``: the URL of a static file, as ``{% static_once %}`` gives it;
- the filters ``study_text`` (a researcher's plain text as paragraphs and lists, escaped) and
  ``list_items`` (``<li>`` items of a group's texts, escaped), and the test-like filter
  ``states_duration`` (whether a researcher's text already says how long the study takes).

Unlike Django's templates, Jinja2 does not call methods by itself: a template writes
``form["token"].value()``, ``form.radio_sections()``.
"""
from __future__ import annotations

from typing import Any

from jinja2 import Environment

from .templatetags.static_once import static_once
from .templatetags.study_text import list_items, states_duration, study_text

#: The ``TEMPLATES`` entry (``NAME``) that renders the step pages: pass it as ``using=``.
STEP_PAGE_ENGINE = "jinja2"


def environment(**options: Any) -> Environment:
    """The environment Django's ``Jinja2`` backend builds (``TEMPLATES`` in settings), with the
    participant pages' global and filters. ``options`` are the backend's (loader, autoescape)."""
    env = Environment(**options)
    env.globals["static_once"] = static_once
    env.filters["study_text"] = study_text
    env.filters["list_items"] = list_items
    env.filters["states_duration"] = states_duration
    return env
