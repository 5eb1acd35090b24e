from django.urls import path

from . import analysis_views, builder_views, ending_views, study_team_views, team_views, views

app_name = "researcher"

urlpatterns = [
    path("", views.study_list, name="study_list"),
    # Before "<slug>/": "team" is therefore not usable as a study slug.
    path("team/", team_views.team, name="team"),
    path("team/remove/", team_views.team_remove, name="team_remove"),
    # The study builder; "new" is therefore not usable as a study slug either.
    path("new/", builder_views.builder_new, name="builder_new"),
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
    path("<slug:slug>/edit/", builder_views.builder_home, name="builder"),
    path("<slug:slug>/edit/publish/", builder_views.builder_publish, name="builder_publish"),
    path("<slug:slug>/edit/study-file.yaml", builder_views.builder_download, name="builder_download"),
    path("<slug:slug>/edit/preview/", builder_views.builder_preview, name="builder_preview"),
    path("<slug:slug>/edit/preview/<int:cell>/<str:page>/", builder_views.builder_preview, name="builder_preview_page"),
    path("<slug:slug>/edit/settings/add/", builder_views.builder_setting_add, name="builder_setting_add"),
    path("<slug:slug>/edit/settings/<int:index>/remove/", builder_views.builder_setting_remove, name="builder_setting_remove"),
    path("<slug:slug>/edit/pattern-check/", builder_views.builder_pattern_check, name="builder_pattern_check"),
    path("<slug:slug>/new-version/", builder_views.builder_new_version, name="builder_new_version"),
    path("<slug:slug>/edit/<str:section>/", builder_views.builder_section, name="builder_section"),
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
