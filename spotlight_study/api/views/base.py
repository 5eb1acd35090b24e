"""What every view of the researcher API shares: the error responses of the schema and the
study named in the URL."""
from __future__ import annotations

from functools import cached_property

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers as drf_serializers
from rest_framework.response import Response

from spotlight_study.studies.models import Study
from spotlight_study.accounts.roles import RUNNING
from spotlight_study.studies.access import study_for_user


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
    403: OpenApiResponse(ERROR_RESPONSE, description="Not allowed (not staff, or no role on the study that allows this)."),
    404: OpenApiResponse(ERROR_RESPONSE, description="No such object."),
    409: OpenApiResponse(ERROR_RESPONSE, description="Not possible in the current state."),
}


def error_responses(*statuses: int) -> dict:
    """The schema's error responses for these HTTP statuses: ``{404: OpenApiResponse, ...}``."""
    return {code: ERRORS[code] for code in statuses}


class StudyScoped:
    """Views under ``/api/studies/<slug>/``: ``self.study`` and ``context["study"]``."""

    #: Roles that pass (``accounts.roles`` role sets, checked by ``studies.access``).
    study_roles = RUNNING

    @cached_property
    def study(self) -> Study:
        """The study named in the URL if the user runs it, settings prefetched
        (:func:`~spotlight_study.studies.access.study_for_user`): ``Http404``, the API's
        ``not_found``, for an unknown slug and for a study the user is no member of alike."""
        return study_for_user(
            user=self.request.user, slug=self.kwargs["slug"], roles=self.study_roles, with_settings=True
        )

    def initial(self, request, *args, **kwargs):
        """After authentication and the permission classes, the study check, before anything
        reads the request body: a non-member gets the 404 of an unknown study, whatever they sent."""
        super().initial(request, *args, **kwargs)
        if not getattr(self, "swagger_fake_view", False):
            self.study  # noqa: B018  (the access check; cached for the view)

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
