"""The OpenAPI schema of the researcher API and Swagger UI over it."""
from __future__ import annotations

from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 schema of this API (``?format=json`` for JSON; YAML by default)."""


class DocsView(SpectacularSwaggerSplitView):
    """Swagger UI over :class:`SchemaView`, self-hosted (drf-spectacular-sidecar's static files).

    The split view serves its start-up script from ``?script`` instead of inline, so the page
    works under the Content-Security-Policy, which allows no inline script.
    """

    template_name = "api/swagger_ui.html"
    url_name = "api:schema"
