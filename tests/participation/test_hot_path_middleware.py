"""The hot path's middleware (docs/performance.md): the CSP header built once per process is the
site policy django-csp builds, per-view CSP changes still apply, and the warm-up removes itself
from the chain after loading the URLconf and the participant templates."""
from __future__ import annotations

import pytest
from csp.constants import HEADER
from csp.decorators import csp_exempt, csp_update
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpResponse
from django.test import RequestFactory

from spotlight_study.middleware import warmup
from spotlight_study.middleware.csp import CachedPolicyCSPMiddleware


def _directives(header: str) -> set[str]:
    # django-csp joins directives in no fixed order; compare them as a set.
    return {d.strip() for d in header.split(";") if d.strip()}


def _serve(view, path: str = "/s/demo/step/"):
    middleware = CachedPolicyCSPMiddleware(view)
    return middleware(RequestFactory().get(path))


def test_cached_header_is_the_site_policy_on_every_response():
    def view(request):
        return HttpResponse("ok")

    middleware = CachedPolicyCSPMiddleware(view)
    first = middleware(RequestFactory().get("/s/demo/step/"))[HEADER]
    second = middleware(RequestFactory().get("/researcher/"))[HEADER]
    assert first == second
    assert _directives(first) == _directives(build_policy())
    assert "form-action 'self' https://app.prolific.com" in _directives(first)


def test_per_view_policies_and_exemptions_still_apply():
    @csp_update({"img-src": ["https://images.example"]})
    def updated(request):
        return HttpResponse("ok")

    @csp_exempt()
    def exempt(request):
        return HttpResponse("ok")

    header = _serve(updated)[HEADER]
    assert "img-src 'self' data: https://images.example" in _directives(header)
    assert HEADER not in _serve(exempt)


def test_a_request_that_asks_for_a_nonce_gets_django_csp_s_own_header():
    def view(request):
        return HttpResponse(str(request.csp_nonce))

    ours = _serve(view)
    theirs = CSPMiddleware(view)(RequestFactory().get("/s/demo/step/"))
    assert _directives(ours[HEADER]) == _directives(theirs[HEADER])


@pytest.mark.django_db
def test_warm_up_loads_the_urlconf_and_leaves_the_chain():
    with pytest.raises(MiddlewareNotUsed):
        warmup.WarmUpMiddleware(lambda request: HttpResponse())
    assert warmup._warmed
    from django.urls import get_resolver

    assert "participation" in get_resolver().namespace_dict
    import sys

    # The overview's agreement libraries, so that a worker's first overview does not import them.
    # NLTK's agreement module took the krippendorff package's place (issue 39, GPL-3.0 removed).
    assert {"sklearn.metrics", "nltk.metrics.agreement"} <= set(sys.modules)
