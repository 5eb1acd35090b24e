"""URLs under ``/api/`` (see docs/api.md)."""
from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import schema  # noqa: F401  (registers the dbid path converter)
from . import views

app_name = "api"

router = SimpleRouter()
router.register("studies", views.StudyViewSet, basename="study")

study = "studies/<slug:slug>/"
urlpatterns = [
    path("schema/", views.SchemaView.as_view(), name="schema"),
    path("docs/", views.DocsView.as_view(), name="docs"),
    path(f"{study}settings/", views.SettingListView.as_view(), name="settings"),
    path(f"{study}cells/", views.CellListView.as_view(), name="cells"),
    path(f"{study}dashboard/", views.DashboardView.as_view(), name="dashboard"),
    path(f"{study}participants/", views.ParticipantListView.as_view(), name="participants"),
    path(f"{study}responses/", views.ResponseListView.as_view(), name="responses"),
    path(f"{study}survey-answers/", views.SurveyAnswerListView.as_view(), name="survey_answers"),
    path(f"{study}annotation/", views.AnnotationProgressView.as_view(), name="annotation"),
    path(f"{study}annotation/agreement/", views.AgreementListView.as_view(), name="agreement"),
    path(f"{study}annotation/final-labels/", views.FinalLabelListView.as_view(), name="final_labels"),
    path(f"{study}analysis/", views.AnalysisView.as_view(), name="analysis"),
    path(f"{study}prolific/", views.ProlificStudyView.as_view(), name="prolific"),
    path(f"{study}prolific/submissions/", views.SubmissionListView.as_view(), name="submissions"),
    path(f"{study}prolific/sync/", views.SyncView.as_view(), name="prolific_sync"),
    path(f"{study}prolific/approve/", views.ApproveView.as_view(), name="prolific_approve"),
    path(f"{study}prolific/failed-checks/", views.FailedChecksView.as_view(), name="prolific_failed_checks"),
    path(f"{study}prolific/bonuses/", views.BonusListView.as_view(), name="bonuses"),
    path(f"{study}prolific/bonuses/<dbid:pk>/", views.BonusDetailView.as_view(), name="bonus"),
    path(f"{study}prolific/bonuses/<dbid:pk>/pay/", views.BonusPayView.as_view(), name="bonus_pay"),
    path("stimuli/sets/", views.StimulusSetListView.as_view(), name="stimulus_sets"),
    path("stimuli/sets/<dbid:pk>/", views.StimulusSetDetailView.as_view(), name="stimulus_set"),
    path("stimuli/sets/<dbid:pk>/outputs/", views.OutputListView.as_view(), name="outputs"),
    path("stimuli/generation-jobs/", views.GenerationJobListView.as_view(), name="generation_jobs"),
    path("stimuli/generation-jobs/<dbid:pk>/", views.GenerationJobDetailView.as_view(), name="generation_job"),
    path("stimuli/generation-jobs/<dbid:pk>/cancel/", views.GenerationJobCancelView.as_view(), name="generation_cancel"),
    path("stimuli/mining-jobs/", views.MiningJobListView.as_view(), name="mining_jobs"),
    path("stimuli/mining-jobs/<dbid:pk>/", views.MiningJobDetailView.as_view(), name="mining_job"),
    path("stimuli/mining-jobs/<dbid:pk>/patterns/", views.MinedPatternListView.as_view(), name="patterns"),
    path("stimuli/<str:kind>-jobs/<dbid:pk>/resume/", views.JobResumeView.as_view(), name="job_resume"),
    path("", include(router.urls)),
]
