"""Root URL configuration."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="researcher:study_list", permanent=False)),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("researcher/", include("spotlight_study.researcher.urls")),
    path("annotate/", include("spotlight_study.annotation.urls")),
    path("stimuli/", include("spotlight_study.stimuli.urls")),
    path("prolific/", include("spotlight_study.prolific.urls")),
    path("api/", include("spotlight_study.api.urls")),
    path("", include("spotlight_study.participation.urls")),
]
