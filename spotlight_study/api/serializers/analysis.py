"""Serializers of the study analysis."""
from __future__ import annotations

from rest_framework import serializers


class AnalysisResultSerializer(serializers.Serializer):
    """The content of ``results.json`` written by ``analysis.run_analysis`` (see analysis/)."""

    results = serializers.DictField()
