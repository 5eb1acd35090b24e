"""The machine coder's request and reply: a blinded prompt, a JSON schema, reply validation.

No database access. The request is built from a :class:`~.selectors.BlindItem` only, the same
allow-list as the human annotator's page, and from that only: the setting's texts in definition
order, the target description, the surface difference and the codebook, the answer, and (when
the ``exclusion`` field is coded) the keys of the answer's writing-process flags. The
condition, the pattern box, the participant (PID, pseudonym) and the item's times never reach
this module, so they cannot reach the model.

The codebook is the default one (the fields above) or the study's declared codebook
(:mod:`.llm_codebook`: its fields' labels, help and options, and the same validator as the label
API). The reply is asked for with structured outputs (``response_format`` of type ``json_schema``,
``strict``); it is validated here again because OpenAI-compatible servers differ in how strictly
they enforce a schema. See ``docs/annotation.md``, "Machine coder".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import llm_codebook
from .errors import InvalidReply
from .models import COMPARED_FIELDS, Exclusion

if TYPE_CHECKING:  # openai takes about 0.5 s to import; stimuli.generation imports it
    import openai

#: What each compared field means, told to the model (the annotator page's wording).
FIELD_QUESTIONS = {
    "identified": "Does the answer name the target difference described above? (true/false)",
    "surface_difference": "Does the answer name the obvious surface difference described "
    "above? (true/false)",
    "no_difference": "Does the participant claim that there is no difference? (true/false)",
    "tags": "Which other differences from the codebook does the answer report? (a list of "
    "codebook tags, possibly empty)",
    "exclusion": "Must the answer be excluded from the analysis, and why? ('none' keeps it)",
}

#: Exclusion values the machine may give (``other`` needs a free-text note; it is not offered).
MACHINE_EXCLUSIONS = tuple(v for v in Exclusion.values if v != Exclusion.OTHER)

SYSTEM_PROMPT = (
    "You code answers of a user study. Participants saw two groups of texts and were asked "
    "what differs between the groups. Code the participant's answer with the codebook. Reply "
    "with one JSON object with exactly the requested fields and nothing else."
)


def validate_fields(
    fields: list[str] | tuple[str, ...] | None, allowed: tuple[str, ...] = COMPARED_FIELDS
) -> tuple[str, ...]:
    """The requested label fields in ``allowed`` order (all of them if none given).

    ``allowed`` is :data:`~.models.COMPARED_FIELDS` under the default codebook; under a declared
    one, its compared field keys and ``exclusion``. Raises ``ValueError`` naming an unknown field.
    """
    if not fields:
        return tuple(allowed)
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise ValueError(
            f"Unknown label field(s): {', '.join(unknown)}. Choose from {', '.join(allowed)}."
        )
    return tuple(f for f in allowed if f in fields)


def response_schema(
    *, fields: tuple[str, ...], codebook: tuple[str, ...], codebook_fields: tuple[dict, ...] | None = None
) -> dict:
    """The ``response_format`` argument: a strict JSON schema with one property per field.

    ``tags`` is an array whose items are the setting's codebook tags (an empty codebook allows
    only the empty list); ``exclusion`` one of :data:`MACHINE_EXCLUSIONS`. Under a declared
    codebook (``codebook_fields``, :func:`.llm_codebook.asked_fields`) each of its fields has
    the property of its type (:func:`.llm_codebook.property_schema`).
    """
    props: dict[str, dict] = {}
    declared = {f["key"]: f for f in codebook_fields or ()}
    for name in fields:
        if name in declared:
            props[name] = llm_codebook.property_schema(declared[name])
        elif name == "tags":
            items = {"type": "string", "enum": list(codebook)} if codebook else {"type": "string"}
            props[name] = {"type": "array", "items": items}
            if not codebook:
                props[name]["maxItems"] = 0
        elif name == "exclusion":
            props[name] = {"type": "string", "enum": list(MACHINE_EXCLUSIONS)}
        else:
            props[name] = {"type": "boolean"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "answer_label",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": props,
                "required": list(fields),
                "additionalProperties": False,
            },
        },
    }


def build_messages(
    blind, *, fields: tuple[str, ...], codebook_fields: tuple[dict, ...] | None = None
) -> list[dict]:
    """The chat messages for one item, from its :class:`~.selectors.BlindItem` only (and, under
    a declared codebook, the item's ``codebook_fields``, built from the study file alone).

    The user message holds, in this order: group 1's texts and group 2's texts (definition
    order), the target description, the surface difference, the codebook, the exclusion values,
    the writing-process flags of the answer (``blind.writing_flags``, only when ``exclusion`` is
    among ``fields``: they are evidence for it alone, and never the numbers behind them), the
    answer, and the questions for ``fields``. Under a declared codebook the codebook section
    lists its fields (the researcher's labels, help and options, word for word) in place of the
    default codebook's tags, and the questions are those fields'.
    """

    def texts(values) -> str:
        return "\n".join(f"[{i}] {t}" for i, t in enumerate(values, start=1))

    if codebook_fields is not None:
        codebook = llm_codebook.codebook_block(codebook_fields)
        questions = "\n".join(
            [llm_codebook.field_question(f) for f in codebook_fields]
            + [f"- exclusion: {FIELD_QUESTIONS['exclusion']}"] * ("exclusion" in fields)
        )
    else:
        codebook = f"CODEBOOK TAGS: {', '.join(blind.codebook) or '(none)'}"
        questions = "\n".join(f"- {name}: {FIELD_QUESTIONS[name]}" for name in fields)
    evidence = ""
    if "exclusion" in fields:
        # Only the writing-process flags of the allow-list, for the exclusion field alone.
        flagged = ", ".join(getattr(blind, "writing_flags", ())) or "none"
        evidence = (
            f"WRITING-PROCESS EVIDENCE (for the exclusion field only; evidence, not proof): "
            f"{flagged}\n\n"
        )
    user = (
        f"GROUP 1 TEXTS:\n{texts(blind.group1)}\n\n"
        f"GROUP 2 TEXTS:\n{texts(blind.group2)}\n\n"
        f"TARGET DIFFERENCE: {blind.target_description}\n"
        f"SURFACE DIFFERENCE: {blind.surface_difference}\n"
        f"{codebook}\n"
        f"EXCLUSION VALUES: {', '.join(MACHINE_EXCLUSIONS)}\n\n"
        f"{evidence}"
        f"PARTICIPANT'S ANSWER:\n{blind.answer}\n\n"
        f"FIELDS TO CODE:\n{questions}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_reply(
    content: str | None, *, fields: tuple[str, ...], codebook: tuple[str, ...],
    codebook_fields: tuple[dict, ...] | None = None,
) -> dict:
    """The label values in a reply, ``{field: value}`` over ``fields`` (tags sorted). Under a
    declared codebook (``codebook_fields``) its fields' values are checked by the label API's
    validator (:func:`.llm_codebook.values_check`) and returned in stored form (canonical
    options; a field left null is absent).

    Raises
    ------
    InvalidReply
        If ``content`` is empty, not JSON, not an object, lacks a field or has another, or a
        value has the wrong type or is not allowed (a tag or option outside the codebook, a
        number out of range, an unknown exclusion).
    """
    if not content or not content.strip():
        raise InvalidReply("the reply is empty")
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise InvalidReply(f"the reply is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InvalidReply("the reply is not a JSON object")
    missing = [f for f in fields if f not in data]
    extra = sorted(set(data) - set(fields))
    if missing:
        raise InvalidReply(f"the reply lacks {', '.join(missing)}")
    if extra:
        raise InvalidReply(f"the reply has fields not asked for: {', '.join(extra)}")
    out = {}
    declared = {f["key"] for f in codebook_fields or ()}
    if codebook_fields is not None:
        out.update(llm_codebook.values_check(data, codebook_fields))
    for name in fields:
        value = data[name]
        if name in declared:
            continue
        if name == "tags":
            if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                raise InvalidReply("tags is not a list of text")
            outside = sorted(set(value) - set(codebook))
            if outside:
                raise InvalidReply(f"tags not in the codebook: {', '.join(outside)}")
            out[name] = sorted(set(value))
        elif name == "exclusion":
            if value not in MACHINE_EXCLUSIONS:
                raise InvalidReply(f"exclusion {value!r} is not one of {', '.join(MACHINE_EXCLUSIONS)}")
            out[name] = value
        else:
            if not isinstance(value, bool):
                raise InvalidReply(f"{name} is not true or false")
            out[name] = value
    return out


@dataclass
class CodedItem:
    """The outcome of coding one item.

    ``values`` is ``{field: value}``, or ``None`` when the label is missing; ``missing_reason``
    says why then. Token counts add up all attempts; the other metadata is from the last reply.
    """

    values: dict | None
    missing_reason: str = ""
    response_model: str = ""
    system_fingerprint: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    attempts: int = 0
    reasons: list[str] = field(default_factory=list)


#: Attempts per item: the first, and one retry after an invalid reply.
MAX_ATTEMPTS = 2


def code_item(
    client: openai.OpenAI,
    *,
    model: str,
    blind,
    fields: tuple[str, ...],
    max_tokens: int = 400,
    seed: int | None = None,
    codebook_fields: tuple[dict, ...] | None = None,
) -> CodedItem:
    """Ask the model for one item's label; an invalid reply is retried once, then missing.

    ``codebook_fields``: under a declared codebook, the item's fields asked
    (:func:`.llm_codebook.asked_fields`); ``fields`` then holds their keys (and ``exclusion``).

    ``temperature`` is 0 so that a rerun gives the same labels where the server allows it.

    Raises
    ------
    openai.APIError
        Whatever the client raises once its own retries (429, 5xx, connection) are spent; the
        caller decides whether the job fails or tries later. A 400 refusal of one request is
        also raised, since it usually means the server or model cannot do structured outputs.
    """
    messages = build_messages(blind, fields=fields, codebook_fields=codebook_fields)
    schema = response_schema(fields=fields, codebook=blind.codebook, codebook_fields=codebook_fields)
    coded = CodedItem(values=None)
    kwargs = {} if seed is None else {"seed": seed}
    for _ in range(MAX_ATTEMPTS):
        response = client.chat.completions.create(
            model=model,
            messages=messages,
            response_format=schema,
            temperature=0,
            max_tokens=max_tokens,
            n=1,
            **kwargs,
        )
        coded.attempts += 1
        coded.response_model = (response.model or "")[:200]
        coded.system_fingerprint = (response.system_fingerprint or "")[:200]
        usage = response.usage
        if usage is not None:
            coded.prompt_tokens += usage.prompt_tokens or 0
            coded.completion_tokens += usage.completion_tokens or 0
            coded.total_tokens += usage.total_tokens or 0
        choice = response.choices[0] if response.choices else None
        coded.finish_reason = (choice.finish_reason or "")[:40] if choice else ""
        try:
            if choice is None:
                raise InvalidReply("the reply has no choice")
            if choice.message.refusal:
                raise InvalidReply(f"the model refused: {choice.message.refusal[:200]}")
            if choice.finish_reason == "length":
                raise InvalidReply("the reply was cut off (finish_reason length)")
            coded.values = parse_reply(choice.message.content, fields=fields, codebook=blind.codebook,
                                       codebook_fields=codebook_fields)
            coded.missing_reason = ""
            return coded
        except InvalidReply as exc:
            coded.reasons.append(str(exc))
    coded.missing_reason = "; ".join(
        f"attempt {i}: {r}" for i, r in enumerate(coded.reasons, start=1)
    )[:1000]
    return coded
