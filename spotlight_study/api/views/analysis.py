"""The study analysis: the latest ``results.json``, or a new run."""
from __future__ import annotations

import json
import tempfile

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response

from spotlight_study.researcher.services import analysis_run, latest_report_dir
from spotlight_study.studies.models import Study

from ..errors import NoAnalysis
from ..serializers.analysis import AnalysisResultSerializer
from .base import StudyScoped, error_responses


@extend_schema(tags=["analysis"])
class AnalysisView(StudyScoped, generics.GenericAPIView):
    """The study analysis (the ``analysis`` package): the latest results, or a new run."""

    serializer_class = AnalysisResultSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    @extend_schema(responses={200: AnalysisResultSerializer, **error_responses(401, 403, 404)})
    def get(self, request, slug: str):
        """The latest ``results.json`` of the study (404 ``no_analysis`` before the first run)."""
        path = latest_report_dir(self.study) / "results.json"
        if not path.exists():
            raise NoAnalysis("No analysis has been run for this study yet.")
        return Response({"results": json.loads(path.read_text(encoding="utf-8"))})

    @extend_schema(request=None, responses={200: AnalysisResultSerializer, **error_responses(401, 403, 404, 409)})
    def post(self, request, slug: str):
        """Run the analysis on the current data and return ``results.json``.

        409 ``not_analysable`` when the data cannot be analysed yet (e.g. answers without final
        annotation labels). A successful run also becomes the latest report of the study.
        """
        with tempfile.TemporaryDirectory(prefix="spotlight-analysis-") as tmp:
            results = analysis_run(study=self.study, out_dir=tmp)
        return Response({"results": results})
