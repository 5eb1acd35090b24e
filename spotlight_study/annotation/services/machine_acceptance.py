"""Writes of the researcher's acceptance of the machine coder's labels as final labels.

The machine coder's labels (:class:`~spotlight_study.annotation.models.MachineLabel`, shown as
the annotator ``llm:<model>``) never count toward k and never become final by agreement. The
researcher may accept one model's labels for chosen label fields, typically after the
non-inferiority decision of :mod:`spotlight_study.annotation.machine_agreement` came out in the
model's favour. Then every item **without a human final label** (agreement or adjudication)
gets a final label of source ``machine`` holding the accepted fields only; items with a human
final label are never touched. Only real items are ever given a machine final label: the
pilot annotation round's items (``Item.is_pilot``) are left out of every acceptance.

Rules:

- explicit: nothing happens without a call naming the model and the fields;
- audited: every accept and revoke is a :class:`~spotlight_study.annotation.models.
  MachineAcceptance` row (who, when, model, field, how many items), never changed;
- one model per study at a time: accepting a second model needs the first revoked;
- reversible: :func:`machine_labels_revoke` removes the accepted fields again (a machine final
  label with no field left is deleted);
- humans win later: when k annotators agree or an adjudicator decides, their final label
  replaces the machine one (:mod:`.final_labels`, :mod:`.adjudication`). Items answered after an
  acceptance get machine values only when it is run again.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from spotlight_study.studies.models import Study

from ..codebook_labels import is_declared
from ..errors import MachineAcceptanceError
from ..models import COMPARED_FIELDS, FinalLabel, MachineAcceptance, MachineLabel
from ..selectors import machine_accepted_fields
from .pool import pool_lock

#: The label fields whose machine values can be accepted, in export order.
ACCEPTABLE_FIELDS = COMPARED_FIELDS


@dataclass(frozen=True)
class AcceptanceReport:
    """What one accept or revoke did.

    ``model`` as asked for (without ``llm:``); ``fields`` in :data:`ACCEPTABLE_FIELDS` order;
    ``items``: ``{field: items whose final value was set (accept) or removed (revoke)}``;
    ``human_final``: items left alone because people set their final label; ``no_value``:
    ``{field: items whose machine label has no value for it}`` (missing label or field not
    requested; accept only).
    """

    action: str
    model: str
    fields: list[str]
    items: dict[str, int]
    human_final: int = 0
    no_value: dict[str, int] | None = None


def _model_name(model: str) -> str:
    """The model as stored on machine labels: ``llm:<model>`` is accepted for ``<model>``."""
    model = (model or "").strip()
    return model[4:] if model.startswith("llm:") else model


def _check_fields(fields: list[str]) -> list[str]:
    """The fields, de-duplicated in :data:`ACCEPTABLE_FIELDS` order; refuses unknown ones."""
    if not fields:
        raise MachineAcceptanceError(
            f"Name at least one label field to accept: {', '.join(ACCEPTABLE_FIELDS)}.",
            fields={"label": ["required"]},
        )
    unknown = sorted(set(fields) - set(ACCEPTABLE_FIELDS))
    if unknown:
        raise MachineAcceptanceError(
            f"Unknown label field(s): {', '.join(unknown)}. "
            f"Choose from {', '.join(ACCEPTABLE_FIELDS)}.",
            fields={"label": [f"unknown: {', '.join(unknown)}"]},
        )
    return [f for f in ACCEPTABLE_FIELDS if f in fields]


def _check_model(study: Study, model: str) -> None:
    """Refuse a model without usable machine labels in the study, naming those that have some."""
    labels = MachineLabel.objects.filter(item__study=study, item__is_pilot=False, model=model)
    if labels.filter(status=MachineLabel.Status.LABELLED).exists():
        return
    known = sorted(
        set(
            MachineLabel.objects.filter(item__study=study, item__is_pilot=False).values_list(
                "model", flat=True
            )
        )
    )
    if labels.exists():
        raise MachineAcceptanceError(
            f"Every machine label of llm:{model} in study '{study.slug}' is missing (invalid "
            "replies or refused requests); there is nothing to accept.",
            fields={"model": ["no usable labels"]},
        )
    hint = (
        f"Models with labels in this study: {', '.join(known)}."
        if known
        else "No model has labelled this study yet: run manage.py llm_annotate first."
    )
    raise MachineAcceptanceError(
        f"There are no machine labels of model '{model}' in study '{study.slug}'. {hint}",
        code="machine_labels_not_found",
        http_status=404,
        fields={"model": ["unknown"]},
    )


def _actor(user, actor: str | None) -> str:
    if actor:
        return actor[:200]
    if user is not None:
        return user.get_username()
    return f"manage.py (system user {getpass.getuser()})"[:200]


def _log(
    study: Study, model: str, action: str, items: dict[str, int], *, user, actor, now: datetime
) -> None:
    """Write the audit rows of one accept or revoke: one per field of ``items``.

    ``items`` is ``{field: items set (accept) or removed (revoke)}``, in field order.
    """
    who = _actor(user, actor)
    MachineAcceptance.objects.bulk_create(
        MachineAcceptance(
            study=study,
            model=model,
            field=field,
            action=action,
            user=user,
            actor=who,
            at=now,
            items=count,
        )
        for field, count in items.items()
    )


def machine_labels_accept(
    *, study: Study, model: str, fields: list[str],
    user=None, actor: str | None = None, now: datetime | None = None,
) -> AcceptanceReport:
    """Make ``model``'s machine labels final for ``fields`` on items without a human final label.

    Parameters
    ----------
    study : Study
    model : str
        The model as given to ``llm_annotate`` (``llm:<model>`` is read as ``<model>``).
    fields : list of str
        Label fields from :data:`ACCEPTABLE_FIELDS`.
    user : User, optional
        Who accepts (recorded); ``None`` on the command line.
    actor : str, optional
        How to name who accepts in the log; defaults to the username, or the system user of
        the command line.
    now : datetime, optional
        For tests.

    Returns
    -------
    AcceptanceReport

    Raises
    ------
    MachineAcceptanceError
        If the study declares its own codebook (not supported), no field or an unknown field
        is named, the model has no usable machine labels in the
        study (``code`` ``machine_labels_not_found``, 404, when it has none at all), or another
        model is currently accepted in the study. Nothing is changed then.

    Notes
    -----
    Runs under the study's pool lock, the lock that agreement and adjudication hold when they
    write final labels, so a human final label cannot appear between the check and the write.
    Running it again is safe: it sets the fields on items that got machine labels or lost
    their human agreement since, and logs a new entry.
    """
    now = now or timezone.now()
    model = _model_name(model)
    if is_declared(study):
        # A machine final label would need the declared fields in FinalLabel.values; the
        # acceptance writes the default codebook's columns only.
        raise MachineAcceptanceError(
            "This study declares its own codebook: its machine labels are compared with the "
            "annotators but cannot be accepted as final labels. Nothing was changed.",
            fields={"label": ["not available under a declared codebook"]},
        )
    fields = _check_fields(fields)
    with transaction.atomic():
        pool_lock(study)
        _check_model(study, model)
        other = {f: m for f, m in machine_accepted_fields(study=study).items() if m != model}
        if other:
            names = ", ".join(f"{f} (llm:{m})" for f, m in sorted(other.items()))
            raise MachineAcceptanceError(
                f"Machine labels of another model are accepted in this study: {names}. "
                "Revoke them first (manage.py llm_accept ... --revoke); one model at a time.",
                fields={"model": ["another model is accepted"]},
            )
        changed, no_value, human = _accept_items(study, model, fields, now)
        _log(
            study, model, MachineAcceptance.Action.ACCEPT, changed, user=user, actor=actor, now=now
        )
    return AcceptanceReport(
        MachineAcceptance.Action.ACCEPT, model, fields, changed, human_final=human, no_value=no_value
    )


def _accept_items(
    study: Study, model: str, fields: list[str], now: datetime
) -> tuple[dict[str, int], dict[str, int], int]:
    """Set ``fields`` from ``model``'s labels on every real item without a human final label.

    Returns ``(changed, no_value, human)``: per field the items whose final value was set or
    changed and those whose machine label has no value, and the items with a human final
    label (left alone). Call with the pool lock held.
    """
    changed = {f: 0 for f in fields}
    no_value = {f: 0 for f in fields}
    human = 0
    labels = MachineLabel.objects.filter(
        item__study=study, item__is_pilot=False, model=model, status=MachineLabel.Status.LABELLED
    ).select_related("item__final_label")
    for label in labels:
        final = getattr(label.item, "final_label", None)
        if final is not None and final.is_human:
            human += 1
            continue
        final = final or _empty_machine_final(label, now)
        for field in fields:
            value = getattr(label, field)
            if value is None:
                no_value[field] += 1
                continue
            value = sorted(value) if field == "tags" else value
            if field not in final.machine_fields or getattr(final, field) != value:
                changed[field] += 1
            setattr(final, field, value)
            final.machine_fields = [
                f for f in ACCEPTABLE_FIELDS if f in {*final.machine_fields, field}
            ]
        if final.machine_fields:
            final.decided_at = now
            final.full_clean(exclude=["item", "adjudicator"])
            final.save()
    return changed, no_value, human


def _empty_machine_final(label: MachineLabel, now: datetime) -> FinalLabel:
    """A new machine final label of ``label``'s item with no field set yet (not saved)."""
    return FinalLabel(
        item=label.item,
        source=FinalLabel.Source.MACHINE,
        machine_model=label.model,
        machine_fields=[],
        identified=None,
        surface_difference=None,
        no_difference=None,
        tags=None,
        exclusion=None,
        exclusion_note="",
        decided_at=now,
    )


def machine_labels_revoke(
    *, study: Study, model: str, fields: list[str],
    user=None, actor: str | None = None, now: datetime | None = None,
) -> AcceptanceReport:
    """Undo :func:`machine_labels_accept` for ``fields``: remove those fields from the study's
    machine final labels of ``model`` (deleting a machine final label left with none).

    Human final labels are never touched. Parameters as :func:`machine_labels_accept`.

    Raises
    ------
    MachineAcceptanceError
        If a field is unknown or not currently accepted from ``model``; nothing is changed then.
    """
    now = now or timezone.now()
    model = _model_name(model)
    fields = _check_fields(fields)
    with transaction.atomic():
        pool_lock(study)
        current = machine_accepted_fields(study=study)
        not_accepted = [f for f in fields if current.get(f) != model]
        if not_accepted:
            raise MachineAcceptanceError(
                f"llm:{model} is not accepted for {', '.join(not_accepted)} in study "
                f"'{study.slug}'; nothing was revoked. Accepted now: "
                + (", ".join(f"{f} (llm:{m})" for f, m in sorted(current.items())) or "nothing")
                + ".",
                fields={"label": [f"not accepted: {', '.join(not_accepted)}"]},
            )
        removed = {f: 0 for f in fields}
        finals = FinalLabel.objects.filter(
            item__study=study, source=FinalLabel.Source.MACHINE, machine_model=model
        )
        for final in finals:
            for field in fields:
                if field in final.machine_fields:
                    removed[field] += 1
                    setattr(final, field, None)
            final.machine_fields = [f for f in final.machine_fields if f not in fields]
            if final.machine_fields:
                final.decided_at = now
                final.save()
            else:
                final.delete()
        _log(
            study, model, MachineAcceptance.Action.REVOKE, removed, user=user, actor=actor, now=now
        )
    return AcceptanceReport(MachineAcceptance.Action.REVOKE, model, fields, removed)
