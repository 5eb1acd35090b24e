"""``study_text``: render a researcher's plain text (consent, instructions) as safe HTML.

Study files write these texts as plain text with blank lines between paragraphs and lists as
lines that start with ``- `` or ``* `` (bullets) or ``1. `` / ``1)`` (numbers). Django's
``linebreaks`` would show such lists as literal "- " lines; this filter turns them into
``<ul>``/``<ol>``. It understands nothing else: every character of the text is escaped, so a study
file cannot put markup on a participant's page.

The library's other filters serve the same pages: ``list_items`` (a group's texts as escaped
``<li>`` items) and ``states_duration`` (whether a consent text already gives the duration).
"""
from __future__ import annotations

import re
from functools import lru_cache

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_ITEM = re.compile(r"^\s{0,3}(?:(?P<bullet>[-*\u2022])|(?P<number>\d{1,3})[.)])\s+(?P<text>\S.*)$")


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Split a paragraph's lines into runs: ``("p", lines)``, ``("ul", items)``, ``("ol", items)``.

    An indented line right after a list item continues that item.
    """
    runs: list[tuple[str, list[str]]] = []
    for line in lines:
        match = _ITEM.match(line)
        if match:
            kind = "ul" if match.group("bullet") else "ol"
            if not runs or runs[-1][0] != kind:
                runs.append((kind, []))
            runs[-1][1].append(match.group("text").strip())
        elif runs and runs[-1][0] in ("ul", "ol") and line[:1] in (" ", "\t"):
            runs[-1][1][-1] += " " + line.strip()
        else:
            if not runs or runs[-1][0] != "p":
                runs.append(("p", []))
            runs[-1][1].append(line.strip())
    return runs


@register.filter(is_safe=True)
def study_text(value: str | None) -> SafeString:
    """Paragraphs (``<p>``, single newlines as ``<br>``) and simple lists, all text escaped.

    ``"Keep in mind:\\n- one\\n- two"`` gives ``<p>Keep in mind:</p><ul><li>one</li><li>two</li></ul>``.
    A study's few texts are shown on every participant's pages, so their HTML is kept (up to
    256 texts per process) instead of being built on every request.
    """
    return _study_html(str(value or ""))


@lru_cache(maxsize=256)
def _study_html(value: str) -> SafeString:
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return mark_safe("")
    html = []
    for paragraph in re.split(r"\n[ \t]*\n+", text):
        for kind, parts in _blocks(paragraph.split("\n")):
            if kind == "p":
                html.append("<p>" + "<br>".join(escape(p) for p in parts) + "</p>")
            else:
                items = "".join(f"<li>{escape(item)}</li>" for item in parts)
                html.append(f"<{kind}>{items}</{kind}>")
    return mark_safe("\n".join(html))


@register.filter(is_safe=True)
def list_items(texts) -> SafeString:
    """``<li>`` elements of ``texts`` (an iterable of strings), each escaped, for a ``<ol>``/``<ul>``.

    A task page lists a group's texts in the participant's order; the items of a study's few
    texts are kept (up to 4,096 per process), so a page joins strings instead of rendering a
    template loop per text.
    """
    return mark_safe("".join(_list_item(str(t)) for t in texts))


@lru_cache(maxsize=4096)
def _list_item(text: str) -> str:
    return f"<li>{escape(text)}</li>"


# A number (digits, a range such as "10-15" or "10 to 15", or a number word) directly before
# a unit of time, in every shipped language (studies/languages.py: en, de, es, fr), whatever the
# study's own language: a consent text may quote another. Deliberately narrow: a text that only
# says "a few minutes" ("wenige Minuten", "unos pocos minutos", "quelques minutes") still gets
# the platform's duration line, which is better shown twice than not at all.
_NUMBER_WORDS = {
    "en": r"an(?=\s+hours?\b)|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
          r"twenty|thirty|forty|forty-five|fifty|sixty|ninety|half an?|a quarter of an?",
    # "eine Stunde" is a duration, "eine Minute Zeit" is not: ein/eine only before an hour.
    "de": r"eine?[rn]?\s+(?:halben?|dreiviertel)|eine?[rn]?(?=\s+(?:viertel)?stunde|\s+std\b)|zwei|drei|"
          r"vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|fünfzehn|zwanzig|dreißig|vierzig|"
          r"fünfundvierzig|fünfzig|sechzig|neunzig",
    "es": r"media|una?(?=\s+horas?\b)|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|"
          r"quince|veinte|treinta|cuarenta(?: y cinco)?|cincuenta|sesenta|noventa",
    "fr": r"une demi|demi|une?(?=\s+heures?\b)|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|"
          r"douze|quinze|vingt|trente|quarante(?:-cinq)?|cinquante|soixante|quatre-vingt-dix",
}
_RANGE_WORDS = r"-|\u2013|\u2014|to|or|bis|oder|a|y|à|ou|et"
_UNITS = (
    r"minutes?|mins?|hours?|hrs?"  # en (fr: minute, minutes, min)
    r"|minuten|std|(?:viertel)?stunden?|minütig\w*|stündig\w*"  # de: "20-minütige Studie"
    r"|minutos?|horas?"  # es
    r"|heures?"  # fr
)
_NUMBER = r"(?:\d+(?:[.,]\d+)?|" + "|".join(_NUMBER_WORDS.values()) + ")"
_DURATION = re.compile(
    rf"\b{_NUMBER}(?:\s*(?:{_RANGE_WORDS})\s*{_NUMBER})?[\s-]*(?:{_UNITS})\b",
    re.IGNORECASE,
)


@register.filter
@lru_cache(maxsize=256)
def states_duration(text: str | None) -> bool:
    """Whether a researcher's text already says how long the study takes (a filter:
    ``{% if not study.consent_text|states_duration %}``).

    True when a number stands right before a unit of minutes or hours: "about 15 minutes",
    "10-15 min", "20 to 25 minutes", "one hour", "half an hour", "a 20-minute study", and the
    same in German, Spanish and French ("15 Minuten", "eine halbe Stunde", "eine 20-minütige
    Studie", "entre 10 y 15 min", "media hora", "de 10 à 15 minutes", "une demi-heure"). The consent
    page then leaves out its own "This study takes about N minutes." line, which could otherwise
    contradict the researcher's figure. Vague words ("a few minutes", "short") do not count.
    """
    return bool(_DURATION.search(str(text or "")))
