from django.urls import path

from . import views

app_name = "stimuli"

urlpatterns = [
    path("", views.stimulus_set_list, name="set_list"),
    path("import/", views.import_outputs, name="import"),
    path("generate/", views.generate_outputs, name="generate"),
    path("sets/<int:pk>/", views.stimulus_set_detail, name="set_detail"),
    path("sets/<int:pk>/mine/", views.mining_start, name="mining_start"),
    path("mining/<int:pk>/", views.mining_job_detail, name="mining_detail"),
    path("mining/<int:pk>/build/", views.setting_build, name="setting_build"),
    path("jobs/generation/<int:pk>/cancel/", views.generation_cancel, name="generation_cancel"),
    path("jobs/<str:kind>/<int:pk>/resume/", views.job_resume, name="job_resume"),
    path("jobs/<str:kind>/<int:pk>/progress.json", views.job_progress, name="job_progress"),
]
