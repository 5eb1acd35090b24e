"""Template filters of the researcher pages."""
from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# A backtick span as the launch check writes it for the terminal, e.g. `manage.py pilot x`.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


@register.filter
def code_spans(text: str) -> SafeString:
    """``text`` escaped, with each `backtick span` shown as ``<code>``; unpaired backticks stay.

    Escaping comes first, so nothing in ``text`` (study slugs, URLs from settings, error
    messages of the URL fetch) can add markup.
    """
    return mark_safe(_CODE_SPAN.sub(r"<code>\1</code>", escape(str(text))))
