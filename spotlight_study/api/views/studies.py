"""Studies: list, detail and import from a study file; settings, cells and the dashboard."""
from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.files.uploadedfile import UploadedFile
from django.db.models import Count
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from spotlight_study.accounts.roles import RUNNING, IsStaff
from spotlight_study.participation.selectors import cell_counts, study_dashboard
from spotlight_study.studies.access import studies_visible_to
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.file_limits import FileLimitError, file_size_check
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.selectors import study_cells
from spotlight_study.studies.services import study_import, study_import_file

from .. import filters
from ..parsers import JSONParser
from ..serializers.studies import (
    CellSerializer,
    DashboardSerializer,
    SettingSerializer,
    StudyImportJSONSerializer,
    StudyImportUploadSerializer,
    StudySerializer,
)
from .base import StudyScoped, error_responses


def _import_upload(upload: UploadedFile, *, replace: bool, drop_missing: bool = False) -> Study:
    """Import an uploaded study file through a temporary copy (the importer reads a path).

    A file named ``*.json`` is read as JSON, any other as YAML (of which JSON is a subset), so
    the file's name never refuses it: its content decides. Raises whatever
    :func:`~spotlight_study.studies.services.study_import_file` raises (a file that is not a
    study file: ``StudyFileError``, 400 ``invalid_study_file``). A file over the size limit
    (512 KiB, ``studies/file_limits.py``) is refused on its announced size, before it is copied.
    """
    try:
        file_size_check(upload.size or 0)
    except FileLimitError as exc:
        name = Path(upload.name or "upload").name
        raise StudyFileError({"(file)": [f"{name}: {exc} (see the size limits in docs/study-file.md)."]}) from None
    suffix = ".json" if Path(upload.name or "").suffix.lower() == ".json" else ".yaml"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"study{suffix}"
        with path.open("wb") as fh:
            for chunk in upload.chunks():
                fh.write(chunk)
        return study_import_file(path=path, replace=replace, drop_missing=drop_missing)


@extend_schema(tags=["studies"], responses={200: StudySerializer, **error_responses(401, 403, 404)})
class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    """Studies: list, one study by slug, and import from a study file."""

    serializer_class = StudySerializer
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"
    filterset_class = filters.StudyFilter
    ordering_fields = ["created_at", "slug", "title"]

    def get_queryset(self):
        # The studies the user runs; any other slug is the 404 of an unknown study.
        return studies_visible_to(self.request.user, RUNNING).annotate(n_participants=Count("participants")).order_by("-created_at", "pk")

    @extend_schema(
        request={
            "application/json": StudyImportJSONSerializer,
            "multipart/form-data": StudyImportUploadSerializer,
        },
        responses={201: StudySerializer, **error_responses(400, 401, 403, 409)},
        description="Import a study from a study file: a JSON body `{\"study\": {...}, \"replace\": "
        "false}` or an uploaded YAML/JSON `file`. The whole file is validated first; every bad "
        "field is named in `error.fields` by its path. 409 if the slug exists (without "
        "`replace`), the study already has participants, or `replace` would delete a setting the "
        "file lacks (without `drop_missing`).",
    )
    # Instance staff only: an import creates a study or replaces one (with its team unchanged).
    @action(
        detail=False, methods=["post"], url_path="import",
        parser_classes=[JSONParser, MultiPartParser, FormParser], permission_classes=[IsStaff],
    )
    def import_study(self, request):
        """Create (or replace) a study from its study file."""
        if "file" in request.FILES:
            form = StudyImportUploadSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            study = _import_upload(
                form.validated_data["file"],
                replace=form.validated_data["replace"],
                drop_missing=form.validated_data["drop_missing"],
            )
        else:
            form = StudyImportJSONSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            study = study_import(
                data=form.validated_data["study"],
                replace=form.validated_data["replace"],
                drop_missing=form.validated_data["drop_missing"],
            )
        study = self.get_queryset().get(pk=study.pk)
        return Response(self.get_serializer(study).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["studies"], responses={200: SettingSerializer(many=True), **error_responses(401, 403, 404)})
class SettingListView(StudyScoped, generics.ListAPIView):
    """The study's settings (training and main) with texts and patterns, in definition order."""

    serializer_class = SettingSerializer
    filterset_class = filters.SettingFilter
    pagination_class = None
    ordering_fields = ["position"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Setting.objects.none()
        return Setting.objects.filter(study=self.study).prefetch_related("patterns").order_by("kind", "position")


@extend_schema(tags=["studies"], responses={200: CellSerializer(many=True), **error_responses(401, 403, 404)})
class CellListView(StudyScoped, generics.GenericAPIView):
    """The counterbalancing cells with the places each holds for balancing and its participants by state."""

    serializer_class = CellSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        cells = study_cells(self.study)
        held = cell_counts(study=self.study, n_cells=len(cells))
        dash = {c["index"]: c for c in study_dashboard(study=self.study)["cells"]}
        rows = [
            {
                "index": c.index,
                "label": c.label,
                "tasks": [{"setting": t.setting, "condition": t.condition} for t in c.tasks],
                "places_held": held.get(c.index, 0),
                **{k: dash[c.index][k] for k in ("in_progress", "completed", "abandoned", "ended")},
            }
            for c in cells
        ]
        return Response(CellSerializer(rows, many=True).data)


@extend_schema(tags=["studies"], responses={200: DashboardSerializer, **error_responses(401, 403, 404)})
class DashboardView(StudyScoped, generics.GenericAPIView):
    """What the researcher page shows: participants per cell, median time per task, flags."""

    serializer_class = DashboardSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        return Response(DashboardSerializer(study_dashboard(study=self.study)).data)
