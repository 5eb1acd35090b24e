"""Whether a study's title shows anything.

A title of only invisible characters (U+200B ZERO WIDTH SPACE, U+FEFF, U+2060 WORD JOINER, with
or without spaces) passed the length and "may not be blank" checks, and the study then showed
with a blank title on the researcher pages and as the participant pages' ``<title>``.
:func:`visible_title_check` is the one rule for every way a title is set: the study file's
validation (:class:`.schema.StudyFileSerializer`: ``import_study``, the REST API, the builder's
sections and its Publish, the admin's edit check) and the builder's new-study form
(:func:`.drafts.draft_start`).

A character is visible when its Unicode general category is a letter, number, punctuation or
symbol (L, N, P, S) and it is not one of the few of those that draw an empty glyph
(:data:`BLANK_GLYPHS`). Separators (Z: spaces), "other" characters (C: controls, format
characters, unassigned and private-use code points) and marks (M: combining marks and
variation selectors, which draw nothing without a character before them) are not.
"""
from __future__ import annotations

import unicodedata

from django.core.exceptions import ValidationError


#: Letters and symbols whose glyph is empty by design (Unicode's fillers and the blank braille
#: pattern): a title of them shows nothing, whatever their category says.
BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_invisible(ch: str) -> bool:
    """True for a character that draws nothing on its own: any character outside the categories
    L, N, P and S (whitespace, controls such as U+0001, format characters such as U+200B and
    U+FEFF, combining marks and variation selectors such as U+034F and U+FE0F, unassigned code
    points), and the blank glyphs of :data:`BLANK_GLYPHS` (U+3164 HANGUL FILLER, U+2800 BRAILLE
    PATTERN BLANK, ...).

    ``ch`` is one character (a ``str`` of length 1).
    """
    return unicodedata.category(ch)[0] not in "LNPS" or ch in BLANK_GLYPHS


def _described(text: str) -> str:
    """``text``'s invisible characters for a message: each one other than whitespace once, by
    code point and Unicode name ("unnamed" for a control character), in order of appearance,
    then "spaces" if it has whitespace."""
    seen: list[str] = []
    for ch in text:
        if not ch.isspace() and ch not in seen:
            seen.append(ch)
    parts = [f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in seen]
    if any(ch.isspace() for ch in text):
        parts.append("spaces")
    return ", ".join(parts)


def visible_title_check(value: str) -> None:
    """Refuse a study title with no visible character.

    Parameters
    ----------
    value : str
        The title as it will be stored (already stripped by the caller, or not).

    Raises
    ------
    django.core.exceptions.ValidationError
        Code ``invisible_title``, when ``value`` is made only of characters that
        :func:`is_invisible` calls invisible, the empty string included; the message names
        the field and those characters. DRF's fields and Django's forms accept it as a
        validator; other callers turn it into their own error type.
    """
    if any(not is_invisible(ch) for ch in value):
        return
    what = _described(value)
    raise ValidationError(
        "The title has no visible character"
        + (f" (it holds only {what})" if what else "")
        + ": give the study a title that people can read.",
        code="invisible_title",
    )
