"""Pay a process's one-off costs when the handler is built, not in its first requests.

Django imports the URLconf (and with it every app's views and what they import, such as the
analysis code; the OpenAI client only when a job first needs one) and compiles each template on
first use. Measured on this 2-core
machine, the first participant flow of a fresh process cost about 2 s of CPU instead of about
0.1 s, almost all of it the URLconf's imports. Under a pre-forking server every worker paid it
again after the fork, in the middle of the traffic it had just started to serve.

This middleware does that work in its ``__init__``, which Django calls when it builds the
request handler, i.e. when ``spotlight_study.wsgi`` is imported: with uWSGI (``uwsgi.ini``
loads the app before forking) that is the master process, once, and the workers inherit the
result (copy-on-write) instead of repeating it. Then it raises ``MiddlewareNotUsed``, so it
costs requests nothing. It never touches the database (a connection opened before the fork
would be shared by every worker).
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from django.core.exceptions import MiddlewareNotUsed
from django.template import TemplateDoesNotExist, engines
from django.urls import get_resolver

# The participant pages and what they extend or include (the hot path of every study): the
# step pages, the entry's and the error pages.
_TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "participation" / "templates"
_EXTRA_TEMPLATES = ("base.html", "400.html", "403.html", "404.html")

# Libraries that views import lazily and that take seconds to import: the launch check on the
# study dashboard tokenizes pattern texts with spaCy; the sample-size planner, the analysis and
# the annotation overview load pandas, scipy and statsmodels through analysis/, and its
# agreement statistics scikit-learn (0.6 s) and NLTK's agreement module (about 1 s beyond
# scipy and pandas; it replaced the GPL krippendorff package in issue 39). Imported here so that a
# researcher's first dashboard or overview in each worker does not wait for them (found in a
# fresh-clone tryout: 3-9 s per worker), while the participant path still never imports them.
_HEAVY_MODULES = ("spacy", "analysis.stats", "analysis.run", "sklearn.metrics",
                  "nltk.metrics.agreement")
_warmed = False
# Work an app above this layer wants done before the fork (registered in its AppConfig.ready):
# the studies app builds spaCy's tokenizer (about 0.5 s), which a participant page uses once per
# definition version and worker to check the stored definition (studies/plan.py).
_HOOKS: list[Callable[[], object]] = []


def warm_up_register(hook: Callable[[], object]) -> None:
    """Have :func:`warm_up` call ``hook()`` too (once; registering it again has no effect)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def warm_up() -> None:
    """Import the URLconf (every view module), run the registered hooks
    (:func:`warm_up_register`) and compile the participant templates.

    Idempotent and cheap after the first call. Raises nothing for a missing template (a
    template renamed later is compiled on its first use instead, as without this).
    """
    global _warmed
    if _warmed:
        return
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 - importing the URLconf and its views is the point
    resolver.reverse_dict  # noqa: B018 - builds the reverse lookup tables every redirect uses
    for module in _HEAVY_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:  # an optional part missing: its page says so when asked
            pass
    for hook in _HOOKS:
        hook()
    names = [str(p.relative_to(_TEMPLATE_DIR)) for p in sorted(_TEMPLATE_DIR.rglob("*.html"))]
    for engine in engines.all():
        for name in (*names, *_EXTRA_TEMPLATES):
            try:
                engine.get_template(name)
            except TemplateDoesNotExist:
                pass
    _warmed = True


class WarmUpMiddleware:
    """Runs :func:`warm_up` when the handler is built, then leaves the middleware chain."""

    def __init__(self, get_response):
        warm_up()
        raise MiddlewareNotUsed
