"""URLs under ``/api/`` (see docs/api.md)."""
from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import schema  # noqa: F401  (registers the dbid path converter)
from .views import analysis, annotation, data, openapi, prolific, stimuli, studies

app_name = "api"

router = SimpleRouter()
router.register("studies", studies.StudyViewSet, basename="study")

study = "studies/<slug:slug>/"
urlpatterns = [
    path("schema/", openapi.SchemaView.as_view(), name="schema"),
    path("docs/", openapi.DocsView.as_view(), name="docs"),
    path(f"{study}settings/", studies.SettingListView.as_view(), name="settings"),
    path(f"{study}cells/", studies.CellListView.as_view(), name="cells"),
    path(f"{study}dashboard/", studies.DashboardView.as_view(), name="dashboard"),
    path(f"{study}participants/", data.ParticipantListView.as_view(), name="participants"),
    path(f"{study}responses/", data.ResponseListView.as_view(), name="responses"),
    path(f"{study}survey-answers/", data.SurveyAnswerListView.as_view(), name="survey_answers"),
    path(f"{study}annotation/", annotation.AnnotationProgressView.as_view(), name="annotation"),
    path(f"{study}annotation/agreement/", annotation.AgreementListView.as_view(), name="agreement"),
    path(f"{study}annotation/final-labels/", annotation.FinalLabelListView.as_view(), name="final_labels"),
    path(f"{study}analysis/", analysis.AnalysisView.as_view(), name="analysis"),
    path(f"{study}prolific/", prolific.ProlificStudyView.as_view(), name="prolific"),
    path(f"{study}prolific/submissions/", prolific.SubmissionListView.as_view(), name="submissions"),
    path(f"{study}prolific/sync/", prolific.SyncView.as_view(), name="prolific_sync"),
    path(f"{study}prolific/approve/", prolific.ApproveView.as_view(), name="prolific_approve"),
    path(f"{study}prolific/failed-checks/", prolific.FailedChecksView.as_view(), name="prolific_failed_checks"),
    path(f"{study}prolific/held/", prolific.HeldListView.as_view(), name="prolific_held"),
    path(
        f"{study}prolific/held/<slug:submission>/decide/",
        prolific.HeldDecideView.as_view(),
        name="prolific_held_decide",
    ),
    path(f"{study}prolific/bonuses/", prolific.BonusListView.as_view(), name="bonuses"),
    path(f"{study}prolific/bonuses/<dbid:pk>/", prolific.BonusDetailView.as_view(), name="bonus"),
    path(f"{study}prolific/bonuses/<dbid:pk>/pay/", prolific.BonusPayView.as_view(), name="bonus_pay"),
    path("stimuli/sets/", stimuli.StimulusSetListView.as_view(), name="stimulus_sets"),
    path("stimuli/sets/<dbid:pk>/", stimuli.StimulusSetDetailView.as_view(), name="stimulus_set"),
    path("stimuli/sets/<dbid:pk>/outputs/", stimuli.OutputListView.as_view(), name="outputs"),
    path("stimuli/generation-jobs/", stimuli.GenerationJobListView.as_view(), name="generation_jobs"),
    path("stimuli/generation-jobs/<dbid:pk>/", stimuli.GenerationJobDetailView.as_view(), name="generation_job"),
    path("stimuli/generation-jobs/<dbid:pk>/cancel/", stimuli.GenerationJobCancelView.as_view(), name="generation_cancel"),
    path("stimuli/mining-jobs/", stimuli.MiningJobListView.as_view(), name="mining_jobs"),
    path("stimuli/mining-jobs/<dbid:pk>/", stimuli.MiningJobDetailView.as_view(), name="mining_job"),
    path("stimuli/mining-jobs/<dbid:pk>/patterns/", stimuli.MinedPatternListView.as_view(), name="patterns"),
    path("stimuli/<str:kind>-jobs/<dbid:pk>/resume/", stimuli.JobResumeView.as_view(), name="job_resume"),
    path("", include(router.urls)),
]
