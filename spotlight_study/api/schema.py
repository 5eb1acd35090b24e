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
