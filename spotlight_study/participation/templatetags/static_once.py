"""``{% static_once 'css/study.css' %}``: Django's ``{% static %}``, looked up once per process.

Every participant page links the style sheet, the icon and the flow script. Django's tag asks
the storage for each URL on every render (with WhiteNoise's manifest storage: a manifest lookup,
URL quoting and joining), a few percent of a participant request's CPU (docs/performance.md).
The storage's URLs do not change while a process runs (``collectstatic`` runs before the server
starts), so each path's URL is kept.
"""
from __future__ import annotations

from functools import lru_cache

from django import template
from django.templatetags.static import static

register = template.Library()


@register.simple_tag(name="static_once")
def static_once(path: str) -> str:
    """The URL of the static file ``path``, as ``{% static path %}`` gives it (kept per process).

    Raises what ``{% static %}`` raises, e.g. ``ValueError`` for a file missing from the
    manifest; a failed lookup is not kept.
    """
    return _url(path)


@lru_cache(maxsize=512)
def _url(path: str) -> str:
    return static(path)
