"""Writes of the Prolific study's places: raise them (Prolific allows places only upwards).

:func:`prolific_study_places_raise` reads the current number from Prolific, then sets it
higher with ``PATCH /studies/{id}/``. Callers compute how many places to add (``manage.py
prolific_top_up``, :mod:`spotlight_study.researcher.top_up`).
"""
from __future__ import annotations

from ..client import ProlificClient
from ..errors import ProlificServiceError
from ..models import ProlificStudy
from .study import client_or_default, linked_prolific_study


def prolific_study_places(*, prolific_study_id: int, client: ProlificClient | None = None) -> int:
    """The study's ``total_available_places`` on Prolific now (``GET /studies/{id}/``)."""
    ps = linked_prolific_study(prolific_study_id)
    with client_or_default(client, study_id=ps.study_id) as c:
        return int(c.study_get(ps.prolific_id).get("total_available_places") or 0)


def prolific_study_places_raise(
    *, prolific_study_id: int, add: int, expected_current: int, client: ProlificClient | None = None
) -> int:
    """Raise the study's places on Prolific from ``expected_current`` by ``add``; returns the new
    number. ``add`` 0 sends nothing.

    ``expected_current`` is the number the caller computed ``add`` from; if Prolific reports
    another one (someone changed it meanwhile), nothing is sent and
    :class:`~..errors.ProlificServiceError` says so, so that places are never added twice.
    Raises it too for a negative ``add`` (places only go up).
    """
    if add < 0:
        raise ProlificServiceError("Places on Prolific can only go up.")
    ps = linked_prolific_study(prolific_study_id)
    with client_or_default(client, study_id=ps.study_id) as c:
        current = int(c.study_get(ps.prolific_id).get("total_available_places") or 0)
        if current != expected_current:
            raise ProlificServiceError(
                f"Prolific now has {current} places, not {expected_current}: run the top-up again."
            )
        if add == 0:
            return current
        body = c.study_update(ps.prolific_id, {"total_available_places": current + add})
    new = int((body or {}).get("total_available_places") or current + add)
    ProlificStudy.objects.filter(pk=ps.pk).update(total_available_places=new)
    return new
