"""``{% memo study %}...{% endmemo %}``: a part of a participant page rendered once per process
for the values it names and the active language, then reused.

Most of a step page is the same for every participant of a study: its title, consent and
instruction texts, headings, labels and buttons in the study's language. Django's template
language costs CPU per node on every render, a large share of a participant request's CPU
(issue 39 §4, docs/performance.md part 11).

Safe by construction: the enclosed part is rendered in a context that holds **only** the
variables the tag names, nothing from the page's own context (no request, form, token, CSRF
token or message), so its output can depend on nothing else. A variable used inside but not
named renders as Django renders a missing variable (an empty string), which the page tests see
(``tests/participation/test_page_memo.py`` compares every step page with and without the
memo). The kept output is found by the active language and the values: numbers, strings,
booleans and ``None`` by value, any other object by identity (a study's plan is immutable and
kept per process, :mod:`spotlight_study.studies.plan`), and an identity is checked against the
object itself, so a new plan after an edit renders again. At most :data:`KEPT_PER_TAG` outputs are kept per tag
in a template; when full the tag starts again.

    {% load page_memo %}
    {% memo study %}<h1>{{ study.title }}</h1>{% endmemo %}
    {% memo min=form.min_chars max=form.max_chars %}...{% endmemo %}
"""
from __future__ import annotations

from django import template
from django.template.base import FilterExpression, NodeList
from django.template.context import Context
from django.utils import translation

register = template.Library()

#: Outputs kept per ``{% memo %}`` tag of a loaded template (a study's languages times the
#: values it names: positions, training or not).
KEPT_PER_TAG = 64
#: Off only in tests that compare a page rendered with and without the memo: off, a memo's
#: content is rendered in the page's whole context with its names added, as ``{% with %}`` would.
ENABLED = True
_BY_VALUE = (str, int, float, bool, type(None))


class MemoNode(template.Node):
    """The ``{% memo %}`` node: see the module docstring.

    Its content is not among the page's nodes that ``{% extends %}`` searches for blocks on
    every render (``child_nodelists`` is empty): a ``{% block %}`` inside a memo would take the
    child template's content once for every page, so none may be there.
    """

    child_nodelists = ()

    def __init__(self, nodelist: NodeList, names: list[tuple[str, FilterExpression]]):
        self.nodelist = nodelist
        self.names = names
        self._kept: dict[tuple, tuple[tuple, str]] = {}

    def render(self, context: Context) -> str:
        values = tuple(expression.resolve(context) for _name, expression in self.names)
        if not ENABLED:  # as if the tag were a {% with %}: the page's whole context
            with context.push(**self._bindings(values)):
                return self.nodelist.render(context)
        key = (translation.get_language(),
               *((v, type(v)) if isinstance(v, _BY_VALUE) else (id(v), None) for v in values))
        kept = self._kept.get(key)
        if kept is not None and all(a is b or isinstance(b, _BY_VALUE) for a, b in zip(kept[0], values)):
            return kept[1]
        output = self._render(context, values)
        if len(self._kept) >= KEPT_PER_TAG:
            self._kept.clear()
        self._kept[key] = (values, output)
        return output

    def _bindings(self, values: tuple) -> dict:
        return {name: value for (name, _e), value in zip(self.names, values)}

    def _render(self, context: Context, values: tuple) -> str:
        inner = Context(self._bindings(values), autoescape=context.autoescape,
                        use_l10n=context.use_l10n, use_tz=context.use_tz)
        inner.template = context.template
        inner.template_name = context.template_name
        return self.nodelist.render(inner)


@register.tag("memo")
def memo(parser, token) -> MemoNode:
    """``{% memo name name=expression ... %}...{% endmemo %}``: see the module docstring.

    Raises ``TemplateSyntaxError`` for an argument that is neither a variable name nor
    ``name=expression``.
    """
    names = []
    for bit in token.split_contents()[1:]:
        name, sep, expression = bit.partition("=")
        if not name.isidentifier():
            raise template.TemplateSyntaxError(
                f"{{% memo %}} takes variable names or name=expression, not {bit!r}."
            )
        names.append((name, parser.compile_filter(expression if sep else name)))
    nodelist = parser.parse(("endmemo",))
    parser.delete_first_token()
    return MemoNode(nodelist, names)
