"""The study file's published JSON Schema, for editors (docs/study-file.md)."""
from __future__ import annotations

from functools import lru_cache

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from .json_schema import study_file_json_schema_text


@lru_cache(maxsize=1)
def _schema_bytes() -> bytes:
    # The schema follows the code, which does not change while the process runs.
    return study_file_json_schema_text().encode("utf-8")


@require_GET
@cache_control(public=True, max_age=3600)
def study_file_schema(request: HttpRequest) -> HttpResponse:
    """``GET /schema/study-file.json``: the study file's JSON Schema (draft 2020-12), public and
    cacheable for an hour; the same text as ``docs/study-file.schema.json`` of this code."""
    return HttpResponse(_schema_bytes(), content_type="application/schema+json")
