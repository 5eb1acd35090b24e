"""URLs under ``/annotate/``: annotator and adjudicator pages, the researcher's annotation page
and exports, and the annotator JSON API."""

from django.urls import path

from . import apis, views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("api/<slug:slug>/next/", apis.NextItemAPI.as_view(), name="api_next"),
    path("api/<slug:slug>/items/<str:item_id>/", apis.ItemAPI.as_view(), name="api_item"),
    path("api/<slug:slug>/items/<str:item_id>/label/", apis.LabelAPI.as_view(), name="api_label"),
    path("<slug:slug>/", views.queue, name="queue"),
    path("<slug:slug>/next/", views.next_item, name="next"),
    path("<slug:slug>/pilot/", views.pilot_queue, name="pilot_queue"),
    path("<slug:slug>/pilot/next/", views.pilot_next_item, name="pilot_next"),
    path("<slug:slug>/items/<str:item_id>/", views.item_page, name="item"),
    path("<slug:slug>/items/<str:item_id>/skip/", views.skip_item, name="skip"),
    path("<slug:slug>/adjudicate/", views.adjudication_list, name="adjudication"),
    path("<slug:slug>/adjudicate/<str:item_id>/", views.adjudicate, name="adjudicate"),
    path("<slug:slug>/overview/", views.overview, name="overview"),
    path("<slug:slug>/overview/machine-accept/", views.machine_accept, name="machine_accept"),
    path("<slug:slug>/overview/pilot-round/", views.pilot_round, name="pilot_round"),
    path("<slug:slug>/export/<str:name>.csv", views.export, name="export"),
]
