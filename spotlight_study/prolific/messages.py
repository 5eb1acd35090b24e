"""The texts of the messages a researcher sends to participants through Prolific.

Plain constants and one function, no database. ``{study}`` is replaced by the study's title.
"""
from __future__ import annotations

#: ``{key: (label, text)}``; ``custom`` (the researcher's own text) is not in it.
MESSAGE_TEMPLATES: dict[str, tuple[str, str]] = {
    "stuck": (
        "Stuck participant",
        "Hello, we noticed that your session of the study \"{study}\" has not moved on for a "
        "while. If something on the page does not work, please reply to this message and tell us "
        "what you see; we will help. If you no longer wish to take part, you can return the "
        "submission on Prolific at any time; nothing is held against you.",
    ),
    "ended": (
        "Session ended by the researcher",
        "Hello, we have ended your session of the study \"{study}\" because it had not moved on "
        "for a long time. Please return your submission on Prolific (the \"Return\" button of "
        "the study in your submissions); nothing is held against you. If something on the page "
        "did not work, please reply to this message and tell us what you saw.",
    ),
    "bonus_paid": (
        "Bonus paid",
        "Hello, thank you for taking part in the study \"{study}\". We have paid you a bonus "
        "through Prolific; it appears in your Prolific account within a few minutes. If it does "
        "not, please reply to this message.",
    ),
}
CUSTOM = "custom"
#: Prolific's messages are short texts; longer ones are refused here with a clear message.
MAX_MESSAGE_CHARS = 5000


def message_text(*, template: str, study_title: str, custom_text: str = "") -> str:
    """The text to send: the template's text with the study's title, or ``custom_text``.

    Raises ``ValueError`` for an unknown template, an empty custom text, or a text over
    :data:`MAX_MESSAGE_CHARS` characters.
    """
    if template == CUSTOM:
        text = (custom_text or "").strip()
        if not text:
            raise ValueError("Write the message, or choose a template.")
    elif template in MESSAGE_TEMPLATES:
        text = MESSAGE_TEMPLATES[template][1].replace("{study}", study_title)
    else:
        raise ValueError(f"Unknown message template: choose one of {', '.join([*MESSAGE_TEMPLATES, CUSTOM])}.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ValueError(f"The message is longer than {MAX_MESSAGE_CHARS} characters.")
    return text
