"""The OpenAPI schema of the researcher API and Swagger UI over it."""
from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotAuthenticated
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
        as the other staff pages do; a logged-in user without the staff role still gets the
        API's 403. Script requests (``?script``) keep the API's 401."""
        if isinstance(exc, NotAuthenticated) and "script" not in self.request.GET:
            return redirect_to_login(self.request.get_full_path())
        return super().handle_exception(exc)
