"""The study file's ``pages:``: pages a study inserts into the participant flow.

Each entry has a ``kind``, a place ``at`` and the kind's own keys (docs/study-file.md, "Pages").
The one kind so far is ``info``: a page of text (a break, a debrief) with a continue button,
optionally refused by the server before ``min_seconds`` have passed since the page was entered.
A position holds at most one page, so the step at that position names the page
(``participation/steps/pages.py``). Pure: no database.
"""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

#: Where a page may stand, in flow order: after the instructions (before the example task),
#: between the example task and the main tasks, after the main tasks (before the survey), and
#: after the survey (before the completion code).
PAGE_POSITIONS = ("after_instructions", "between_tasks", "before_survey", "end")
#: The page kinds the flow runs.
PAGE_KINDS = ("info",)
#: The kinds the issue plans but the flow does not run yet: refused with a clear message.
_PLANNED_KINDS = ("attention_check", "comprehension_quiz")


class InfoPageSerializer(serializers.Serializer):
    """One ``pages:`` entry of kind ``info``: ``title`` and ``text`` (Markdown-free study text,
    shown as the study's other texts), ``min_seconds`` (0 to 3600 s; 0: continue at once)."""

    kind = serializers.CharField(max_length=40)
    at = serializers.ChoiceField(
        choices=PAGE_POSITIONS,
        error_messages={"invalid_choice": "`{input}` is not a place: use one of "
                        + ", ".join(PAGE_POSITIONS) + "."},
    )
    title = serializers.CharField(max_length=200)
    text = serializers.CharField(max_length=20000)
    min_seconds = serializers.IntegerField(min_value=0, max_value=3600, default=0)

    def validate_kind(self, value: str) -> str:
        """``value`` if the flow runs that kind; a planned or unknown kind is refused by name."""
        if value in _PLANNED_KINDS:
            raise serializers.ValidationError(
                f"The page kind `{value}` is not available yet; the kinds are: {', '.join(PAGE_KINDS)}."
            )
        if value not in PAGE_KINDS:
            raise serializers.ValidationError(
                f"Unknown page kind `{value}`; the kinds are: {', '.join(PAGE_KINDS)}."
            )
        return value


class PagesField(serializers.ListField):
    """The top-level ``pages:`` list (optional; absent: no pages): at most one page per place."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            # No default: a file without pages cleans without the key, as its export is written.
            child=InfoPageSerializer(), required=False, max_length=len(PAGE_POSITIONS),
            **kwargs,
        )

    def to_internal_value(self, data: Any) -> list[dict]:
        """The cleaned pages; raises ``ValidationError`` when two pages share a place."""
        pages = super().to_internal_value(data)
        places = [page["at"] for page in pages]
        twice = sorted({at for at in places if places.count(at) > 1})
        if twice:
            raise serializers.ValidationError(
                f"At most one page per place; more than one is at: {', '.join(twice)}."
            )
        return pages


def page_at(pages: Any, at: str) -> dict | None:
    """The page of ``pages`` (a study's stored ``pages`` list) placed ``at``, or ``None``."""
    return next((dict(page) for page in pages or () if page.get("at") == at), None)
