"""The study file's ``pages:``: pages a study inserts into the participant flow.

Each entry has a ``kind``, a place ``at`` and the kind's own keys (docs/study-file.md, "Pages").
The kinds: ``info``, a page of text (a break, a debrief) with a continue button, optionally
refused by the server before ``min_seconds`` have passed since the page was entered;
``attention_check``, one question with a correct option and an ``on_fail`` policy;
``comprehension_quiz``, questions about the instructions with ``max_tries``.
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
#: What a failed ``attention_check`` (or a ``comprehension_quiz`` after its last try) does: the
#: instruction check's choices (docs/study-file.md, "Pages"). ``flag``: continue, the failure
#: stored and shown; ``end``: the study ends with the failed-check completion code; ``return``:
#: the study ends and the participant is asked to return the submission on Prolific (no code);
#: ``second_attempt`` (attention check only): one more try at the same question.
ON_FAIL = ("flag", "end", "return", "second_attempt")
#: The quiz has tries of its own (``max_tries``); a second attempt is what they are.
QUIZ_ON_FAIL = ("flag", "end", "return")

PAGE_PLACE_FIELD = serializers.ChoiceField(
    choices=PAGE_POSITIONS,
    error_messages={"invalid_choice": "`{input}` is not a place: use one of "
                    + ", ".join(PAGE_POSITIONS) + "."},
)


def on_fail_field(choices: tuple[str, ...]) -> serializers.ChoiceField:
    """The ``on_fail`` field of a check page: one of ``choices``, default ``flag``."""
    return serializers.ChoiceField(
        choices=choices, default="flag",
        error_messages={"invalid_choice": "`{input}` is not a policy: use one of "
                        + ", ".join(choices) + "."},
    )


class QuestionSerializer(serializers.Serializer):
    """One multiple-choice question: ``question`` (study text), ``options`` (2 to 10 distinct
    texts) and ``correct``, the correct option written as in ``options``."""

    question = serializers.CharField(max_length=2000)
    options = serializers.ListField(
        child=serializers.CharField(max_length=300), min_length=2, max_length=10
    )
    correct = serializers.CharField(max_length=300)

    def validate(self, attrs: dict) -> dict:
        """Refuses repeated options and a ``correct`` that is not one of them, by key."""
        options = attrs["options"]
        if len(set(options)) != len(options):
            raise serializers.ValidationError({"options": ["Each option may appear only once."]})
        if attrs["correct"] not in options:
            raise serializers.ValidationError({"correct": [
                f"`{attrs['correct'][:80]}` is not one of the options; write the correct option "
                "exactly as in `options`."
            ]})
        return attrs


class InfoPageSerializer(serializers.Serializer):
    """One ``pages:`` entry of kind ``info``: ``title`` and ``text`` (Markdown-free study text,
    shown as the study's other texts), ``min_seconds`` (0 to 3600 s; 0: continue at once)."""

    kind = serializers.ChoiceField(choices=["info"])
    at = PAGE_PLACE_FIELD
    title = serializers.CharField(max_length=200)
    text = serializers.CharField(max_length=20000)
    min_seconds = serializers.IntegerField(min_value=0, max_value=3600, default=0)


#: The page kinds the flow runs, each with the serializer of its keys: ``info`` here, the others
#: registered by their step modules (``participation/steps/<kind>.py``, imported when the
#: participation app is ready): studies cannot import participation, so a kind declares its
#: keys beside its page.
PAGE_SERIALIZERS: dict[str, type[serializers.Serializer]] = {"info": InfoPageSerializer}


def page_kind_register(kind: str, serializer: type[serializers.Serializer]) -> None:
    """Let the study file's ``pages:`` hold pages of ``kind``, their keys checked by
    ``serializer`` (a DRF serializer with ``kind`` and ``at`` fields, e.g. built from
    :data:`PAGE_PLACE_FIELD` and :class:`QuestionSerializer`). Registering a kind again replaces
    its serializer."""
    PAGE_SERIALIZERS[kind] = serializer


def page_kinds() -> tuple[str, ...]:
    """The page kinds a study file may use, in registration order."""
    return tuple(PAGE_SERIALIZERS)


class PageField(serializers.Field):
    """One ``pages:`` entry: its ``kind`` chooses the serializer of its keys
    (:data:`PAGE_SERIALIZERS`); the schema offers them as ``oneOf`` (``json_schema.py``) and the
    unknown-key check follows :meth:`variant_for` (``schema.py``)."""

    variants = PAGE_SERIALIZERS

    def variant_for(self, value: Any) -> serializers.Serializer | None:
        """The serializer of ``value``'s kind, or ``None`` for a value without a known kind."""
        kind = value.get("kind") if isinstance(value, dict) else None
        serializer = PAGE_SERIALIZERS.get(kind) if isinstance(kind, str) else None
        return None if serializer is None else serializer()

    def to_internal_value(self, data: Any) -> dict:
        """The cleaned entry; raises ``ValidationError`` naming the key at fault."""
        if not isinstance(data, dict):
            raise serializers.ValidationError("A page is a mapping with `kind`, `at` and its keys.")
        if "kind" not in data:
            raise serializers.ValidationError({"kind": ["This field is required."]})
        serializer = self.variant_for(data)
        if serializer is None:
            raise serializers.ValidationError({"kind": [
                f"Unknown page kind `{str(data.get('kind'))[:40]}`; the kinds are: {', '.join(page_kinds())}."
            ]})
        serializer = type(serializer)(data=data)
        if not serializer.is_valid():
            raise serializers.ValidationError(serializer.errors)
        return dict(serializer.validated_data)

    def to_representation(self, value: Any) -> Any:
        """The stored entry as it is."""
        return value


class PagesField(serializers.ListField):
    """The top-level ``pages:`` list (optional; absent: no pages): at most one page per place."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            # No default: a file without pages cleans without the key, as its export is written.
            child=PageField(), required=False, max_length=len(PAGE_POSITIONS),
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


def page_at(pages: Any, at: str, *, kind: str | None = None) -> dict | None:
    """The page of ``pages`` (a study's stored ``pages`` list) placed ``at``, or ``None``; with
    ``kind``, only a page of that kind (``info``, ``attention_check``, ``comprehension_quiz``)."""
    return next(
        (dict(page) for page in pages or ()
         if page.get("at") == at and (kind is None or page.get("kind", "info") == kind)),
        None,
    )
