from django.urls import path

from . import views

app_name = "researcher"

urlpatterns = [
    path("", views.study_list, name="study_list"),
    path("<slug:slug>/", views.study_detail, name="study_detail"),
    path("<slug:slug>/report/", views.latest_report, name="report"),
    path("<slug:slug>/preview/", views.preview_index, name="preview"),
    path("<slug:slug>/preview/<int:cell>/<str:page>/", views.preview_page, name="preview_page"),
]
