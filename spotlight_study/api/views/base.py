"""What every view of the researcher API shares: the error responses of the schema and the
study named in the URL."""
from __future__ import annotations

from functools import cached_property

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers as drf_serializers
from rest_framework.response import Response

from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_get_or_404


ERROR_RESPONSE = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorBody",
            fields={
                "status": drf_serializers.IntegerField(),
                "code": drf_serializers.CharField(),
                "message": drf_serializers.CharField(),
                "fields": drf_serializers.DictField(child=drf_serializers.ListField(child=drf_serializers.CharField())),
            },
        )
    },
)
ERRORS = {
    400: OpenApiResponse(ERROR_RESPONSE, description="Invalid input."),
    401: OpenApiResponse(ERROR_RESPONSE, description="Not authenticated."),
    403: OpenApiResponse(ERROR_RESPONSE, description="Not staff."),
    404: OpenApiResponse(ERROR_RESPONSE, description="No such object."),
    409: OpenApiResponse(ERROR_RESPONSE, description="Not possible in the current state."),
}


def error_responses(*statuses: int) -> dict:
    """The schema's error responses for these HTTP statuses: ``{404: OpenApiResponse, ...}``."""
    return {code: ERRORS[code] for code in statuses}


class StudyScoped:
    """Views under ``/api/studies/<slug>/``: ``self.study`` and ``context["study"]``."""

    @cached_property
    def study(self) -> Study:
        """The study named in the URL, settings prefetched (``Http404``: the API's ``not_found``)."""
        return study_get_or_404(slug=self.kwargs["slug"])

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context["study"] = self.study
        return context

    def paginated(self, rows: list, serializer_class) -> Response:
        """A page of a plain list (computed rows rather than a query)."""
        page = self.paginate_queryset(rows)
        data = serializer_class(page, many=True, context=self.get_serializer_context()).data
        return self.get_paginated_response(data)
