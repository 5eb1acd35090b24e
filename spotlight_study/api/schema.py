"""drf-spectacular hooks of the researcher API's schema."""
from __future__ import annotations

from django.urls import register_converter


def only_researcher_api(endpoints: list, **kwargs) -> list:
    """Keep the endpoints under ``/api/``.

    The annotator API (``/annotate/api/``) is another API for another audience, documented in
    docs/annotation.md; it is not part of this schema.
    """
    return [e for e in endpoints if e[0].startswith("/api/")]


class DatabaseIdConverter:
    """Path converter ``<dbid:pk>``: a positive integer that fits a 64-bit database id.

    Django's ``int`` converter accepts any number of digits, and a 40-digit id makes the
    database driver fail (a 500) instead of a 404.
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(int(value))


register_converter(DatabaseIdConverter, "dbid")


#: Statuses every operation can answer, whatever it does: no or a bad token (401), not staff
#: (403), over the request rate (429, ``Retry-After``), the database unreachable just now (503,
#: ``Retry-After``; spotlight_study/database_outage.py).
_ALWAYS = {401: "Not authenticated.", 403: "Not staff.", 429: "Too many requests (Retry-After).",
           503: "The database cannot be reached just now (Retry-After)."}
_INPUT = {400: "Invalid input: `error.fields` names the parameters or body fields."}
_MISSING = {404: "No such object, or a page past the last one."}
_BODY = {413: "The body is too large.", 415: "A body type the operation does not read."}


def documented_errors(result: dict, generator=None, request=None, public=None) -> dict:
    """drf-spectacular postprocessing hook: add to each operation the error responses it can
    give and its view does not declare, each with the one error body (``Error``).

    400 where there are query parameters or a body; 404 where there is a path parameter or a
    ``page``; 413 and 415 where there is a body; 401, 403, 429 and 503 everywhere. Without them a
    client (or schemathesis' status-code check) meets statuses the schema does not list.
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("ErrorBody", {
        "type": "object",
        "properties": {"status": {"type": "integer"}, "code": {"type": "string"},
                       "message": {"type": "string"},
                       "fields": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}},
        "required": ["status", "code", "message", "fields"],
    })
    schemas.setdefault("Error", {"type": "object", "properties": {"error": {"$ref": "#/components/schemas/ErrorBody"}},
                                 "required": ["error"]})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            parameters = operation.get("parameters", [])
            wanted = dict(_ALWAYS)
            if "requestBody" in operation:
                wanted.update(_INPUT | _BODY)
            if any(p.get("in") == "query" for p in parameters):
                wanted.update(_INPUT)
            if any(p.get("in") == "path" or p.get("name") == "page" for p in parameters):
                wanted.update(_MISSING)
            for status, description in wanted.items():
                operation["responses"].setdefault(str(status), {
                    "description": description,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                })
    return result


def strict_inputs(result: dict, generator=None, request=None, public=None) -> dict:
    """drf-spectacular postprocessing hook: the schema says what the API enforces on input.

    - Request bodies (the ``*Request`` components) have ``additionalProperties: false``: their
      serializers refuse unknown fields (``api/serializers/strict.py``).
    - A string query parameter has ``minLength: 1`` (``ordering`` aside, which DRF reads empty
      as "the default order"): the filters refuse an empty value (``api/filters.py``).
    - Free text (query parameters and the bodies' top-level fields) has a pattern without NUL,
      which Django's and DRF's text fields refuse, and, where it may not be empty, with a
      character that is not white space (white space alone is read as empty). ``ordering`` takes any text: DRF ignores the
      names it does not know.
    """
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
            for prop in component.get("properties", {}).values():
                _no_nul(prop)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter.get("in") == "query" and parameter["name"] != "ordering":
                    if schema.get("type") == "string":
                        schema.setdefault("minLength", 1)
                    _no_nul(schema)
    return result


#: A text without NUL: Django's form and DRF's text fields refuse it (PostgreSQL cannot store it).
NO_NUL_PATTERN = "^[^\\x00]*$"
#: The characters Python's ``str.strip()`` removes (those with ``str.isspace()``). Spelled out
#: because ``\s`` differs between regex dialects: ECMA-262's, which JSON Schema names and API
#: clients use, leaves out U+001C-U+001F and U+0085, which Python strips.
STRIPPED_WHITESPACE = (
    "\\t\\n\\u000b\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
#: The same with at least one character that is not white space: a text that may not be blank
#: is read without its surrounding white space (DRF's ``trim_whitespace``, Django's form fields),
#: so ``" "`` or ``"\x1f"`` is refused as empty.
NOT_BLANK_PATTERN = f"^[^\\x00]*[^{STRIPPED_WHITESPACE}\\x00][^\\x00]*$"


def _no_nul(schema: dict) -> None:
    """Add a pattern to a free text's schema (not to an enum, a file or a format):
    :data:`NOT_BLANK_PATTERN` where it has ``minLength``, else :data:`NO_NUL_PATTERN`."""
    if schema.get("type") == "string" and not ({"enum", "format", "pattern"} & schema.keys()):
        schema["pattern"] = NOT_BLANK_PATTERN if schema.get("minLength", 0) >= 1 else NO_NUL_PATTERN
