"""URLs under ``/prolific/``: the webhook and the researcher's review pages."""
from django.urls import path, re_path

from . import views
from .services.review import submissions_approve_completed, submissions_review_failed_checks

app_name = "prolific"

# Bonus payment ids are at most 18 digits (a 64-bit id); longer numbers are a 404, not a 500.
BONUS = r"^(?P<slug>[-a-zA-Z0-9_]+)/bonuses/(?P<pk>[0-9]{1,18})/"

urlpatterns = [
    path("webhook/", views.webhook, name="webhook"),
    # A study's own webhook URL: verified with its secret, changes that study only.
    path("webhook/<slug:slug>/", views.webhook, name="study_webhook"),
    path("<slug:slug>/", views.review, name="review"),
    path("<slug:slug>/sync/", views.sync, name="sync"),
    path("<slug:slug>/credentials/", views.credentials, name="credentials"),
    path("<slug:slug>/demographics/", views.demographics, name="demographics"),
    path("<slug:slug>/message/", views.message, name="message"),
    # One review view; the URL names the service it runs.
    path("<slug:slug>/approve/", views.review_action, {"service": submissions_approve_completed}, name="approve"),
    path(
        "<slug:slug>/failed-checks/",
        views.review_action,
        {"service": submissions_review_failed_checks},
        name="failed_checks",
    ),
    path("<slug:slug>/held/", views.held, name="held"),
    re_path(
        r"^(?P<slug>[-a-zA-Z0-9_]+)/held/(?P<submission_id>[0-9a-zA-Z]{1,64})/(?P<action>[a-z_]{1,20})/$",
        views.held_decide,
        name="held_decide",
    ),
    path("<slug:slug>/bonuses/", views.bonus_draft, name="bonus_draft"),
    re_path(BONUS + "$", views.bonus, name="bonus"),
    re_path(BONUS + "pay/$", views.bonus_pay, name="bonus_pay"),
]
