"""The annotator API (``/annotate/api/<slug>/...``): JSON twins of the annotator pages, thin
wrappers around the same services and selectors (docs/annotation.md).

Items are addressed by their opaque ``public_id``, and an item that is not the annotator's answers
404 whether or not it exists, as on the pages (:mod:`.views`).
"""

from __future__ import annotations

import logging

from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from spotlight_study.accounts.roles import ANNOTATING, IsAnnotator
from spotlight_study.studies.access import study_for_user

from . import selectors
from .codebook_labels import is_declared, item_fields
from .models import Annotation, Item
from .serializers import BlindItemSerializer, LabelInSerializer, LabelOutSerializer
from .services.labels import label_save
from .services.queue import assignment_next, item_open


class _AnnotatorAPI(APIView):
    # Errors: the project's DRF handler (REST_FRAMEWORK["EXCEPTION_HANDLER"]) answers the app's
    # errors (404 item_not_found, 409 reservation_lost or stale_label with the saved label,
    # 400 invalid_label) in the researcher API's shape; see docs/annotation.md.
    authentication_classes = [SessionAuthentication]
    permission_classes = [IsAnnotator]
    # JSON, and forms as a page's fetch may send them (the researcher API's default is JSON only).
    parser_classes = [*api_settings.DEFAULT_PARSER_CLASSES, FormParser, MultiPartParser]

    def _payload(self, item: Item, annotator) -> dict:
        own = selectors.own_annotation(item=item, annotator=annotator)
        blind = selectors.blind_item(item)
        payload = {
            "item": BlindItemSerializer(blind).data,
            "label": LabelOutSerializer(own).data if own else None,
            "pilot": blind.is_pilot,
        }
        if is_declared(item.study):  # the study's own fields, options completed per setting
            payload["item"]["fields"] = item_fields(item.study, item.setting)
        return payload


class NextItemAPI(_AnnotatorAPI):
    """``POST``: reserve (or resume) the next item; ``{"item": ..., "label": ..., "pilot":
    false}`` or ``{"item": null, "label": null, "pilot": false}`` when nothing is left.
    ``?pilot=1``: the next item of the open pilot round (``"pilot": true``; 409
    ``pilot_round_closed`` when it is closed)."""

    def post(self, request, slug: str):
        study = study_for_user(user=request.user, slug=slug, roles=ANNOTATING)
        raw = request.query_params.get("pilot", "0")
        if raw not in ("0", "1"):
            raise ValidationError({"pilot": ["pilot must be 1 (the pilot round) or 0."]})
        item = assignment_next(study=study, annotator=request.user, pilot=raw == "1")
        if item is None:
            return Response({"item": None, "label": None, "pilot": raw == "1"})
        item = selectors.item_queryset().get(pk=item.pk)
        return Response(self._payload(item, request.user))


class ItemAPI(_AnnotatorAPI):
    """``GET``: one of the annotator's items and their own label (writes nothing: the label's
    save checks the reservation again)."""

    def get(self, request, slug: str, item_id: str):
        study = study_for_user(user=request.user, slug=slug, roles=ANNOTATING)
        item = item_open(study=study, annotator=request.user, public_id=item_id)
        return Response(self._payload(item, request.user))


label_api_logger = logging.getLogger("spotlight_study.annotation.label_api")


def _log_label_body(request, item_id: str) -> None:
    """One INFO line per label sent to the API: the body's shape (json, form or multipart)
    and the names of the fields it had, never their values, so that a label's origin can be
    traced in the log (issue 26: before, a label from a form body missing a yes/no field could
    not be told from one that said "No")."""
    content_type = request.content_type or ""
    shape = {"application/json": "json", "application/x-www-form-urlencoded": "form",
             "multipart/form-data": "multipart"}.get(content_type, content_type[:40] or "none")
    names = ",".join(sorted(str(k)[:40] for k in request.data.keys())) if hasattr(request.data, "keys") else ""
    label_api_logger.info(
        "label API: annotator %s, item %s, body %s, fields %s", request.user.pk, item_id, shape, names
    )


class LabelAPI(_AnnotatorAPI):
    """``PUT`` (or ``POST``): save the annotator's label of an item; returns the item and label.

    With ``base_revision`` (the ``revision`` the client last read; 0 for none) a label saved
    since then is not overwritten: 409 with the saved label as ``current``.
    """

    def put(self, request, slug: str, item_id: str):
        study = study_for_user(user=request.user, slug=slug, roles=ANNOTATING)
        serializer = LabelInSerializer(data=request.data, declared=is_declared(study))
        serializer.is_valid(raise_exception=True)
        _log_label_body(request, item_id)
        label_save(
            study=study,
            annotator=request.user,
            public_id=item_id,
            label=serializer.label_input(),
            source=Annotation.Source.API,
            base_revision=serializer.validated_data.get("base_revision"),
        )
        item = selectors.item_queryset().get(study=study, public_id=item_id)
        return Response(self._payload(item, request.user))

    post = put
