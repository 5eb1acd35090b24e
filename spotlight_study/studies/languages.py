"""The language of a study's participant pages (the study file's ``language``).

The researcher writes the study's own texts (consent, instructions, settings, survey) in any
language; ``language`` says which one, so that the platform's own words on the participant
pages (buttons, counters, errors, the refusal and end pages) come in it too, and ``<html
lang>``, the text direction, numbers and dates follow it. The platform ships translations for
:data:`SHIPPED_LANGUAGES` (``locale/``); any other code Django knows is accepted, with a
warning, and its pages show the platform's words in English.
"""
from __future__ import annotations

from django.utils.translation import get_language_info, gettext, gettext_noop, override

#: The default: a study file without ``language`` is in English.
DEFAULT_LANGUAGE = "en"

#: The task prompt of a study file without ``task_prompt`` (a platform text, so translated).
DEFAULT_TASK_PROMPT = gettext_noop(
    "Describe the general differences between the texts in Group 1 and Group 2."
)

#: The texts a study begun in the builder starts with (``draft_skeleton``), in its language: a
#: starting point to rewrite, not a finished consent form. Keys are study-file fields.
DEFAULT_TEXTS = {
    "consent_text": gettext_noop(
        "Thank you for your interest in this study. You will read short texts, describe in your "
        "own words how two groups of texts differ, and answer a few questions. Taking part is "
        "voluntary: you may stop at any time by returning the study on Prolific. Your answers are "
        "stored under a pseudonym and used for research only. [Researchers: replace this text "
        "with your own consent information: who you are, what you collect, how long it takes and "
        "how to reach you.]"
    ),
    "instructions_text": gettext_noop(
        "You will see two groups of short texts, Group 1 and Group 2. Apart from the differences "
        "between single texts, the two groups may differ in general ways: in what the texts say "
        "or in how they are written. Describe these general differences in the text box. Only "
        "differences between the groups count, and a difference need not show in every text."
    ),
    "pattern_intro_text": gettext_noop(
        "In some tasks a highlighted box lists words that occur more often in one of the groups. "
        "Treat them as hints: they may point to a meaningful difference between the groups, or not."
    ),
}

#: Languages whose platform strings are translated (a catalog under ``locale/<code>/``).
SHIPPED_LANGUAGES = ("en", "de", "es", "fr")


def language_known(code: str) -> bool:
    """Whether Django knows the language ``code`` (``"de"``, ``"pt-br"``; its ``LANG_INFO``)."""
    try:
        get_language_info(code)
    except KeyError:
        return False
    return True


def language_warning(code: str) -> str | None:
    """A warning for a study in ``code`` when the platform ships no translation for it, else
    ``None``: ``language_warning("ar")`` says the platform's words stay English there."""
    if code in SHIPPED_LANGUAGES:
        return None
    name = get_language_info(code)["name"] if language_known(code) else code
    return (
        f"language `{code}` ({name}): the platform ships no translation for it, so its own words "
        "on the participant pages (buttons, counters, error and end pages) stay in English; the "
        f"study's texts, the page language and the text direction follow `{code}`. Translated: "
        f"{', '.join(SHIPPED_LANGUAGES)}."
    )


def default_task_prompt(code: str) -> str:
    """:data:`DEFAULT_TASK_PROMPT` in the language ``code`` (English without a translation);
    the import stores it for a study file that gives no ``task_prompt``."""
    with override(code):
        return gettext(DEFAULT_TASK_PROMPT)


def default_texts(code: str) -> dict[str, str]:
    """:data:`DEFAULT_TEXTS` in the language ``code`` (English without a translation), plus the
    default task prompt: ``{"consent_text": ..., "task_prompt": ...}``."""
    with override(code):
        texts = {name: gettext(text) for name, text in DEFAULT_TEXTS.items()}
        texts["task_prompt"] = gettext(DEFAULT_TASK_PROMPT)
    return texts


def pattern_label(tokens, group: int) -> str:
    """The line of a token pattern in the pattern box, in the active language: e.g.
    ``maize, beans (more often in group 1)``. The tokens are the study's own words, as given."""
    return gettext("%(tokens)s (more often in group %(group)s)") % {
        "tokens": ", ".join(tokens),
        "group": group,
    }
