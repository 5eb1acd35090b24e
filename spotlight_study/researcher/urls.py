from django.urls import path

from . import analysis_views, ending_views, study_team_views, team_views, views

app_name = "researcher"

urlpatterns = [
    path("", views.study_list, name="study_list"),
    # Before "<slug>/": "team" is therefore not usable as a study slug.
    path("team/", team_views.team, name="team"),
    path("team/remove/", team_views.team_remove, name="team_remove"),
    path("<slug:slug>/", views.study_detail, name="study_detail"),
    path("<slug:slug>/team/", study_team_views.study_team, name="study_team"),
    path("<slug:slug>/team/remove/", study_team_views.study_team_remove, name="study_team_remove"),
    path("<slug:slug>/audit/", study_team_views.study_audit, name="study_audit"),
    path("<slug:slug>/audit.csv", study_team_views.study_audit_csv, name="study_audit_csv"),
    path("<slug:slug>/report/", analysis_views.latest_report, name="report"),
    path("<slug:slug>/analysis/", analysis_views.analysis_start, name="analysis_start"),
    path("<slug:slug>/analysis/<int:run_id>/", analysis_views.analysis_run_detail, name="analysis_run"),
    path("<slug:slug>/analysis/<int:run_id>/progress.json", analysis_views.analysis_progress,
         name="analysis_progress"),
    path("<slug:slug>/analysis/<int:run_id>/report/", analysis_views.analysis_report,
         name="analysis_report"),
    path("<slug:slug>/analysis/<int:run_id>/files/<path:name>", analysis_views.analysis_file,
         name="analysis_file"),
    path("<slug:slug>/analysis/<int:run_id>.zip", analysis_views.analysis_zip, name="analysis_zip"),
    path("<slug:slug>/pilot/", views.pilot, name="pilot"),
    path("<slug:slug>/monitor/", views.monitor, name="monitor"),
    path("<slug:slug>/monitor/rows/", views.monitor_rows, name="monitor_rows"),
    path("<slug:slug>/monitor/end/", ending_views.monitor_end, name="monitor_end"),
    path("<slug:slug>/participants/<str:pseudonym>/", views.participant_detail, name="participant"),
    path("<slug:slug>/export.zip", views.export_zip, name="export_zip"),
    path("<slug:slug>/study-file.yaml", views.study_file, name="study_file"),
    path("<slug:slug>/preview/", views.preview_index, name="preview"),
    path("<slug:slug>/preview/<int:cell>/<str:page>/", views.preview_page, name="preview_page"),
]
