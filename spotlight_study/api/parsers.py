"""The JSON parser of both JSON APIs (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``).

DRF's ``JSONParser`` turns a ``ValueError`` into a 400 ``parse_error`` but lets Python's
``RecursionError`` through: a body nested about 1,000 levels deep (``[[[[...]]]]``) became a
500. :class:`JSONParser` refuses it as malformed JSON, with the one error body of both APIs.
"""
from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser; nesting too deep for Python's JSON decoder is a 400 ``parse_error``."""

    def parse(self, stream, media_type=None, parser_context=None):
        """The decoded body (DRF's rules); raises ``ParseError`` for bad or too-deep JSON."""
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
