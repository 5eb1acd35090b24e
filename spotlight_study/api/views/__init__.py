"""The researcher REST API: thin DRF views over the apps' selectors and services.

One module per area (the schema's tags): :mod:`.studies`, :mod:`.data` (participants, answers,
survey), :mod:`.annotation`, :mod:`.analysis`, :mod:`.stimuli`, :mod:`.prolific`, and
:mod:`.openapi` (the schema and Swagger UI); :mod:`.base` holds what they share.

For instance staff and the owners and researchers of a study (``accounts.roles.IsStudyRunner``,
token or session authentication); the study of a ``/api/studies/<slug>/`` URL is checked by
``studies.access.study_for_user`` (:class:`.base.StudyScoped`): a study the user does not run is
the 404 of an unknown slug, and the study list shows only theirs. The stimulus endpoints and the
import are instance staff only (``IsStaff``). Annotators get 403 here and use the blinded
annotator API under ``/annotate/api/`` instead.
Errors have one shape (:mod:`spotlight_study.api.exceptions`). Lists are paginated (``?page``,
``?page_size``) and filtered with django-filter where they are database queries.
"""
