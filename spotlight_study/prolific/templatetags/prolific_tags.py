"""Template tags of the Prolific app: the Prolific box of the study page, its credentials form
and the message form."""
from django import template

from ..selectors import review_summary

register = template.Library()


@register.inclusion_tag("prolific/_summary.html")
def prolific_summary(study) -> dict:
    """Submission statuses and pending review counts of ``study`` (see ``review_summary``)."""
    return {"study": study, "summary": review_summary(study)}


@register.inclusion_tag("prolific/_credentials_form.html", takes_context=True)
def prolific_credentials_form(context, study) -> dict:
    """The form of the study's own Prolific credentials: each shown as set or not set (never
    its value), whether they can be saved here (a key in ``PROLIFIC_CREDENTIALS_KEYS``), and the
    study's own webhook URL."""
    from ..credentials import credentials_status, encryption_available
    from ..forms import CredentialsForm

    return {
        "study": study,
        "csrf_token": context.get("csrf_token"),
        "status": credentials_status(study.pk),
        "can_save": encryption_available(),
        "form": CredentialsForm(),
    }


@register.inclusion_tag("prolific/_message_form.html", takes_context=True)
def prolific_message_form(context, study, back: str = "review") -> dict:
    """The form to message one participant or a group through Prolific, with the study's last
    five messages; ``back`` (``review`` or ``monitor``) is the page to return to."""
    from ..messages import MESSAGE_TEMPLATES
    from ..models import Message
    from ..services.messages import MESSAGE_FILTERS

    return {
        "study": study,
        "back": back,
        "csrf_token": context.get("csrf_token"),
        "templates": [(k, label) for k, (label, _text) in MESSAGE_TEMPLATES.items()],
        "groups": [(k, label) for k, (label, _statuses) in MESSAGE_FILTERS.items()],
        "recent": list(Message.objects.filter(prolific_study__study=study)[:5]),
    }
