"""The researcher REST API: thin DRF views over the apps' selectors and services.

One module per area (the schema's tags): :mod:`.studies`, :mod:`.data` (participants, answers,
survey), :mod:`.annotation`, :mod:`.analysis`, :mod:`.stimuli`, :mod:`.prolific`, and
:mod:`.openapi` (the schema and Swagger UI); :mod:`.base` holds what they share.

Staff only (``accounts.roles.IsStaff``, token or session authentication). Annotators are not
staff: they get 403 here and use the blinded annotator API under ``/annotate/api/`` instead.
Errors have one shape (:mod:`spotlight_study.api.exceptions`). Lists are paginated (``?page``,
``?page_size``) and filtered with django-filter where they are database queries.
"""
