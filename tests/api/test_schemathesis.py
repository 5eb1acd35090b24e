"""schemathesis against /api/schema/: requests generated from the schema never cause a 5xx.

The schema is read from the running app as staff. Every ``{slug}`` path parameter is pinned to
the demo study (which has participants and answers), and the stimulus ids to a set and jobs
that exist, so that generated requests reach the real code rather than stopping at a 404. The requests go through the WSGI application in
this thread, on the test database (rolled back afterwards). Examples per operation are bounded
(``SCHEMATHESIS_EXAMPLES``, default 12) to keep the run under about a minute.
"""
from __future__ import annotations

import contextlib
import os

import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from spotlight_study.stimuli.models import GenerationJob, MiningJob, Output, StimulusSet

from ..annotation.conftest import complete_participants

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "12"))


@contextlib.contextmanager
def keep_test_connection():
    """Stop Django from closing the test transaction's connection after each WSGI request
    (Django's own test client does the same)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def pinned_schema(raw: dict, slug: str, ids: dict[str, int]) -> dict:
    """The schema with every ``slug`` path parameter restricted to ``slug``, the ``id`` of the
    paths starting with a prefix in ``ids`` to that id, and a mining job's ``stimulus_set`` to
    the stimulus set of ``ids``."""
    for path, operations in raw["paths"].items():
        pinned_id = next((pk for prefix, pk in ids.items() if path.startswith(prefix)), None)
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for param in operation.get("parameters", []):
                if param.get("in") == "path" and param.get("name") == "slug":
                    param["schema"] = {"type": "string", "enum": [slug]}
                if param.get("in") == "path" and param.get("name") == "id" and pinned_id is not None:
                    param["schema"] = {"type": "integer", "enum": [pinned_id]}
    body = raw["components"]["schemas"]["MiningJobCreateRequest"]["properties"]
    body["stimulus_set"] = {"type": "integer", "enum": [ids["/api/stimuli/sets/"]]}
    return raw


def stimuli_data() -> dict[str, int]:
    """A stimulus set with outputs, a generation job and a mining job with a pattern."""
    stimulus_set = StimulusSet.objects.create(title="generated", source="imported")
    Output.objects.bulk_create(
        Output(stimulus_set=stimulus_set, group=g, index=i, text=f"text {g} {i}") for g in (1, 2) for i in range(4)
    )
    generation = GenerationJob.objects.create(
        stimulus_set=StimulusSet.objects.create(title="g", source="generated"),
        base_url="http://127.0.0.1:9/v1", model="m", prompt_group1="a", prompt_group2="b", n_per_group=2, total=4,
    )
    mining = MiningJob.objects.create(stimulus_set=stimulus_set, method="ctfidf", params={"top_k": 5}, total=8)
    mining.patterns.create(rank=0, clauses=[["text"]], group=1, count_group1=4, count_group2=4, score=0.1)
    return {
        "/api/stimuli/sets/": stimulus_set.pk,
        "/api/stimuli/generation-jobs/": generation.pk,
        "/api/stimuli/mining-jobs/": mining.pk,
    }


def test_generated_requests_find_no_server_error(api, demo_study, staff_user, settings):
    """Every operation, with generated valid data as staff, answers without a 5xx."""
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    settings.PROLIFIC_API_TOKEN = ""  # Prolific actions answer 409; nothing leaves this machine
    complete_participants(demo_study.slug, 2)
    ids = stimuli_data()
    raw = api.get("/api/schema/?format=json").json()
    schema = schemathesis.openapi.from_dict(pinned_schema(raw, demo_study.slug, ids))
    schema.app = get_wsgi_application()
    headers = {"Authorization": f"Token {Token.objects.get(user=staff_user).key}"}
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30

    with keep_test_connection():
        for operation in operations:

            @given(case=operation.as_strategy())
            @hypothesis_settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def run(case):
                response = case.call(headers=headers)
                case.validate_response(response, checks=[not_a_server_error])

            try:
                run()
            except Exception as exc:  # collect every failing operation, then report them all
                failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:2000]}")
    assert not failures, "\n\n".join(failures)
