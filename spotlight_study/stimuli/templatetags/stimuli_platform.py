"""``{% premise_problem as problem %}``: why Premise cannot run on this server, or "" (it can)."""
from django import template

from spotlight_study.stimuli.mining import premise_problem_here

register = template.Library()


@register.simple_tag
def premise_problem() -> str:
    """The message of :func:`~spotlight_study.stimuli.mining.premise_problem_here`, or ""."""
    return premise_problem_here() or ""
