"""Root URL configuration."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.generic import RedirectView

from spotlight_study.studies.views import study_file_schema

urlpatterns = [
    # First: the participant pages are nearly every request of a running study, and Django tries
    # the patterns in order (their ``s/<slug>/`` prefix overlaps no other pattern).
    path("", include("spotlight_study.participation.urls")),
    path("", RedirectView.as_view(pattern_name="researcher:study_list", permanent=False)),
    # Browsers ask for /favicon.ico on every page; the icon is static/img/favicon.svg (linked
    # from templates/base.html). Lazy: the static URL (hashed in production) is read per request.
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("img/favicon.svg"), permanent=False)),
    path("admin/", admin.site.urls),
    # The study file's JSON Schema for editors (docs/study-file.md), public.
    path("schema/study-file.json", study_file_schema, name="study_file_schema"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # One-time links to set a password (manage.py add_annotator, the researcher team page).
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("researcher/", include("spotlight_study.researcher.urls")),
    path("annotate/", include("spotlight_study.annotation.urls")),
    path("stimuli/", include("spotlight_study.stimuli.urls")),
    path("prolific/", include("spotlight_study.prolific.urls")),
    path("api/", include("spotlight_study.api.urls")),
]

# Error pages worded for participants, researchers or annotators by URL (spotlight_study.errors).
handler400 = "spotlight_study.errors.bad_request"
handler403 = "spotlight_study.errors.permission_denied"
handler404 = "spotlight_study.errors.page_not_found"
handler500 = "spotlight_study.errors.server_error"
