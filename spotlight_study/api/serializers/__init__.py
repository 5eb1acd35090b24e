"""Serializers of the researcher API, one module per area of ``api/views/``.

Every field is listed explicitly. Participants appear only as their export pseudonym
(``participant``: ``p_`` + 16 hex digits, :class:`.fields.PseudonymField`); no serializer here
has a field for the raw Prolific ID, study ID or session ID.
"""
