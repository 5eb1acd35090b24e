"""Writes of the workspace's webhook subscriptions: the ones that point at this server.

``manage.py prolific_webhooks <slug> list|create|delete`` calls these. The workspace is
``PROLIFIC_WORKSPACE_ID``, else the linked Prolific study's ``workspace``; the target is
``PROLIFIC_STUDY_BASE_URL`` + ``/prolific/webhook/`` (Prolific requires https), or
``/prolific/webhook/<slug>/`` for a study with credentials of its own. ``create``
subscribes :data:`EVENT_TYPES` that are not subscribed yet (a second run creates nothing) and
confirms each with its ``X-Hook-Secret``; it needs the workspace's signing secret, which must be
the study's secret in force (its own, else ``PROLIFIC_WEBHOOK_SECRET``): with ``new_secret``
Prolific makes one (replacing any); for a study with its own token it is saved, encrypted, as the
study's webhook secret, else it is returned once, to be put into the environment.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.urls import reverse

from ..client import ProlificClient
from ..errors import ProlificServiceError
from ..credentials import SOURCE_STUDY, study_credentials
from .credentials import credentials_save
from .study import client_or_default, linked_prolific_study

#: The events this server handles (``views.webhook``).
EVENT_TYPES = ("submission.status.change", "study.status.change")


@dataclass
class HooksReport:
    """``subscriptions`` pointing here (dicts as Prolific returns them), ``created`` and
    ``deleted`` ids, and ``new_secret`` (only when one was made for the instance; a study with its
    own token gets it saved as its own webhook secret instead: ``secret_saved``)."""

    workspace: str
    target_url: str
    subscriptions: list[dict] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    new_secret: str = ""
    secret_saved: bool = False


def _target_url(study) -> str:
    """The instance's webhook URL, or the study's own when it has credentials of its own (its own
    workspace: events there are verified with its secret and change only it)."""
    base = settings.PROLIFIC_STUDY_BASE_URL.rstrip("/")
    if not base.startswith("https://"):
        raise ProlificServiceError("Set PROLIFIC_STUDY_BASE_URL to this server's public https origin first.")
    credentials = study_credentials(study.pk)
    if SOURCE_STUDY in (credentials.token_source, credentials.secret_source):
        return base + reverse("prolific:study_webhook", args=[study.slug])
    return base + reverse("prolific:webhook")


def _workspace(c: ProlificClient, prolific_id: str) -> str:
    workspace = settings.PROLIFIC_WORKSPACE_ID or str(c.study_get(prolific_id).get("workspace") or "")
    if not workspace:
        raise ProlificServiceError("Set PROLIFIC_WORKSPACE_ID: Prolific did not name the study's workspace.")
    return workspace


def _ours(subs: list[dict], target: str) -> list[dict]:
    return [s for s in subs if s.get("target_url") == target]


def hooks_manage(
    *, prolific_study_id: int, action: str, new_secret: bool = False, client: ProlificClient | None = None,
    actor=None,
) -> HooksReport:
    """``list``, ``create`` or ``delete`` the subscriptions to this server (module docstring).

    Raises :class:`~..errors.ProlificServiceError` for an unknown action, a missing https base
    URL or workspace, or (``create``) a signing secret that is not this server's, and the
    Prolific errors of the calls.
    """
    if action not in ("list", "create", "delete"):
        raise ProlificServiceError("The action must be list, create or delete.")
    ps = linked_prolific_study(prolific_study_id)
    target = _target_url(ps.study)
    own_workspace = study_credentials(ps.study_id).token_source == SOURCE_STUDY
    with client_or_default(client, study_id=ps.study_id) as c:
        report = HooksReport(workspace=_workspace(c, ps.prolific_id), target_url=target)
        mine = _ours(c.hook_subscriptions(report.workspace), target)
        if action == "delete":
            for s in mine:
                c.hook_subscription_delete(str(s["id"]))
                report.deleted.append(str(s["id"]))
            mine = []
        elif action == "create":
            if new_secret:
                value = str(c.hook_secret_create(report.workspace).get("value") or "")
                if own_workspace:  # stored encrypted as the study's own, never printed
                    credentials_save(study=ps.study, webhook_secret=value, actor=actor, via="prolific_webhooks")
                    report.secret_saved = True
                else:
                    report.new_secret = value
            else:
                values = {str(s.get("value")) for s in c.hook_secrets(report.workspace)}
                secret = study_credentials(ps.study_id).webhook_secret
                if not secret or secret not in values:
                    raise ProlificServiceError(
                        "The workspace's webhook secret is not the one this server uses for the study "
                        "(its own, else PROLIFIC_WEBHOOK_SECRET): run with --new-secret (it replaces the "
                        "workspace's secret; for a study with its own token it is saved with the study)."
                    )
            have = {s.get("event_type") for s in mine}
            for event_type in EVENT_TYPES:
                if event_type not in have:
                    created = c.hook_subscription_create(
                        workspace_id=report.workspace, event_type=event_type, target_url=target
                    )
                    report.created.append(str(created.get("id")))
            mine = _ours(c.hook_subscriptions(report.workspace), target)
        report.subscriptions = mine
    return report
