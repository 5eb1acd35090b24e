from django.apps import AppConfig


class ResultsConfig(AppConfig):
    """The joined export of answers and final labels (``export_results``); no models."""

    name = "spotlight_study.results"
    label = "results"
