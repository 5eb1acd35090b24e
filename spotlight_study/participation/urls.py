from django.urls import path

from . import views

app_name = "participation"

urlpatterns = [
    path("s/<slug:slug>/", views.entry, name="entry"),
    path("s/<slug:slug>/step/", views.step, name="step"),
    path("s/<slug:slug>/draft/", views.draft, name="draft"),
]
