"""``{% prolific_summary study %}``: the Prolific box of the researcher's study page."""
from django import template

from ..selectors import review_summary

register = template.Library()


@register.inclusion_tag("prolific/_summary.html")
def prolific_summary(study) -> dict:
    """Submission statuses and pending review counts of ``study`` (see ``review_summary``)."""
    return {"study": study, "summary": review_summary(study)}
