"""The OpenAPI schema of the researcher API and Swagger UI over it."""
from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotAuthenticated, PermissionDenied

from spotlight_study.errors import permission_denied
from rest_framework.renderers import JSONRenderer


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 schema of this API (``?format=json`` for JSON; YAML by default).

    Errors (401 without login, 403 without the staff role, 404 for an unknown ``?format``) are
    answered in JSON, the error body of every other API response (docs/api.md), whatever the
    schema format asked for.
    """

    def finalize_response(self, request, response, *args, **kwargs):
        """DRF's response finalisation, with an error response rendered as ``application/json``.

        ``response.exception`` is set by DRF's ``handle_exception``; the schema's own renderers
        (YAML, OpenAPI JSON) would otherwise render the error body in YAML.
        """
        if getattr(response, "exception", False):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class DocsView(SpectacularSwaggerSplitView):
    """Swagger UI over :class:`SchemaView`, self-hosted (drf-spectacular-sidecar's static files).

    The split view serves its start-up script from ``?script`` instead of inline, so the page
    works under the Content-Security-Policy, which allows no inline script.
    """

    template_name = "api/swagger_ui.html"
    url_name = "api:schema"

    def handle_exception(self, exc):
        """A visitor who is not logged in is sent to the login page (and back here after it),
        and a logged-in user without the staff role gets the staff area's 403 page, as on the
        other staff pages (DRF's HTML renderer would render ``403.html`` without its area, i.e.
        with the participants' wording). Script requests (``?script``) keep the API's 401/403."""
        if "script" not in self.request.GET:
            if isinstance(exc, NotAuthenticated):
                return redirect_to_login(self.request.get_full_path())
            if isinstance(exc, PermissionDenied):
                return permission_denied(self.request, exc)
        return super().handle_exception(exc)
