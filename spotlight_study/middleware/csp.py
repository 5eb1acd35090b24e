"""django-csp's middleware, with the header of the site-wide policy built once per process.

django-csp 4 builds the ``Content-Security-Policy`` header anew for every response (it copies
the policy into a dataclass, merges it and joins the directives: about 0.15 ms of CPU per
response here, a tenth of a participant request). With no decorator on the view and no nonce
asked for, every response carries the same two header values, built from the settings. This
subclass builds them on first use and then only sets them. A response that does carry
per-view changes (``@csp_update``, ``@csp_replace``, ``@csp``, ``@csp_exempt``, their
report-only twins) or a request whose template used ``request.csp_nonce`` goes through
django-csp's own code, unchanged. The cache lives in the middleware instance, so it follows the
settings of the handler that created it (``override_settings`` in a test that builds a new
handler, e.g. Django's test client, sees the new policy).
"""
from __future__ import annotations

import http.client as http_client

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

# Response attributes django-csp's decorators set; any of them means "not the site policy".
_PER_VIEW_ATTRS = (
    "_csp_config", "_csp_update", "_csp_replace", "_csp_exempt",
    "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro", "_csp_exempt_ro",
)


class CachedPolicyCSPMiddleware(CSPMiddleware):
    """:class:`csp.middleware.CSPMiddleware` with the site policy's headers built once.

    Same headers, same exemptions (``EXCLUDE_URL_PREFIXES``, DEBUG error pages), same nonce
    behaviour as django-csp's middleware; see the module docstring for when it defers to it.
    """

    def __init__(self, get_response):
        super().__init__(get_response)
        self._site_headers: tuple[tuple[str, str, tuple[str, ...]], ...] | None = None

    def _headers(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """``((header, value, excluded path prefixes), ...)`` of the site policy, built once."""
        if self._site_headers is None:
            headers = []
            for header, setting, report_only in (
                (HEADER, "CONTENT_SECURITY_POLICY", False),
                (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", True),
            ):
                value = build_policy(report_only=report_only)
                if value:
                    policy = getattr(settings, setting, None) or {}
                    prefixes = tuple(policy.get("EXCLUDE_URL_PREFIXES", None) or ())
                    headers.append((header, value, prefixes))
            self._site_headers = tuple(headers)
        return self._site_headers

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        """Set the cached site headers, or defer to django-csp for per-view policies and nonces."""
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, attr, None) is not None for attr in _PER_VIEW_ATTRS
        ):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in (
            http_client.INTERNAL_SERVER_ERROR,
            http_client.NOT_FOUND,
        ):
            return response
        for header, value, prefixes in self._headers():
            if header not in response and not (prefixes and request.path_info.startswith(prefixes)):
                response[header] = value
        # As django-csp: a nonce asked for after the header is written is an error, not a
        # silently missing nonce.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
