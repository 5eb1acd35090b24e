"""The study analysis: the latest ``results.json``, or a new run."""
from __future__ import annotations

import json
import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response

from spotlight_study.researcher.analysis_execution import analysis_job_run
from spotlight_study.researcher.analysis_jobs import analysis_job_create
from spotlight_study.researcher.analysis_storage import output_open
from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.researcher.selectors import analysis_run_latest
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
        """The latest ``results.json`` of the study, from the analysis storage (404
        ``no_analysis`` before the first successful run)."""
        run = analysis_run_latest(study=self.study)
        if run is None:
            raise NoAnalysis("No analysis has been run for this study yet.")
        with output_open(prefix=run.storage_prefix, name="results.json") as fh:
            return Response({"results": json.loads(fh.read().decode("utf-8"))})

    @extend_schema(request=None, responses={200: AnalysisResultSerializer, **error_responses(401, 403, 404, 409)})
    def post(self, request, slug: str):
        """Run the analysis on the current data and return ``results.json``.

        409 ``not_analysable`` when the data cannot be analysed yet (e.g. answers without final
        annotation labels), 409 ``analysis_busy`` while another run of the study is going. The
        run is recorded and stored like one from the study page (started by the token's user,
        origin "API"), and a successful one becomes the latest report of the study.
        """
        run = analysis_job_create(study=self.study, origin=AnalysisRun.Origin.API,
                                  created_by=request.user, dispatch=False)
        results = analysis_job_run(job_id=run.pk, run_id=uuid.uuid4().hex, reraise=True)
        return Response({"results": results})
