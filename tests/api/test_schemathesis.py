"""schemathesis against /api/schema/: the API and its published schema agree (issue 38, part 4).

The schemathesis command line (``st run --checks all``: every phase, valid and invalid data,
status codes, content types, response bodies, headers) runs against the API on a live server
(pytest-django's ``live_server``, on the test database), as staff, and must report 0 failures.
Examples per operation are bounded (``SCHEMATHESIS_EXAMPLES``, default 5), and the seed is the
suite's, so a failure repeats with ``TEST_SEED``.

Every ``{slug}`` path parameter is the demo study (with participants and answers) and every
stimulus ``{id}`` a set or job that exists, given as schemathesis parameters rather than by
editing the schema, so that its invalid data is still invalid for the real API. schemathesis'
settings, and why each is there, are in ``tests/api/schemathesis.toml``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
from rest_framework.authtoken.models import Token
from rest_framework.throttling import UserRateThrottle

from spotlight_study.stimuli.models import GenerationJob, MiningJob, Output, StimulusSet

from ..annotation.conftest import complete_participants
from ..processes import VENV_BIN, run_command

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "5"))
CONFIG = Path(__file__).with_name("schemathesis.toml")


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


def pinned_config(slug: str, ids: dict[str, int]) -> str:
    """``tests/api/schemathesis.toml`` plus the path parameters of this database: ``slug`` for
    every ``{slug}``, and for the paths under each prefix of ``ids`` that id for ``{id}``."""
    lines = [CONFIG.read_text(encoding="utf-8"), "", "[parameters]", f'"path.slug" = "{slug}"']
    for prefix, pk in ids.items():
        lines += ["", "[[operations]]", f'include-path-regex = "^{prefix}"', f'parameters = {{ "path.id" = {pk} }}']
    # The resume URL names the kind in the path: a generation job's id.
    lines += ["", "[[operations]]", 'include-path-regex = "^/api/stimuli/\\\\{kind\\\\}-jobs/"',
              f'parameters = {{ "path.kind" = "generation", "path.id" = {ids["/api/stimuli/generation-jobs/"]} }}']
    return "\n".join(lines) + "\n"


def test_schemathesis_finds_no_mismatch_between_the_api_and_its_schema(
    live_server, demo_study, staff_user, settings, monkeypatch, tmp_path, request
):
    """`st run --checks all` as staff, every operation with SCHEMATHESIS_EXAMPLES examples:
    0 failures (no 5xx, no valid request refused, no invalid one accepted, answers as documented)."""
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
    settings.PROLIFIC_API_TOKEN = ""  # Prolific actions answer 409; nothing leaves this machine
    # DRF reads the rates into the class once; a run sends more than 1,200 requests a minute.
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "1000000/min"})
    complete_participants(demo_study.slug, 2)
    ids = stimuli_data()
    token = Token.objects.create(user=staff_user).key
    headers = {"Authorization": f"Token {token}"}
    raw = httpx.get(f"{live_server.url}/api/schema/?format=json", headers=headers, timeout=120).json()
    # The one body field that names a row: the set with outputs, so a valid mining job can be made.
    body = raw["components"]["schemas"]["MiningJobCreateRequest"]["properties"]
    body["stimulus_set"] = {"type": "integer", "enum": [ids["/api/stimuli/sets/"]]}
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(raw), encoding="utf-8")
    config_path = tmp_path / "schemathesis.toml"
    config_path.write_text(pinned_config(demo_study.slug, ids), encoding="utf-8")
    seed = request.config.spotlight_test_seed
    print(f"schemathesis seed {seed}, {EXAMPLES} examples per operation")

    result = run_command(
        [str(VENV_BIN / "st"), "--no-color", "--config-file", str(config_path), "run", str(schema_path),
         "--url", live_server.url, "--header", f"Authorization: Token {token}", "--checks", "all",
         "--max-examples", str(EXAMPLES), "--workers", "1", "--seed", str(seed), "--request-timeout", "60"],
        cwd=tmp_path, timeout=900, merge_stderr=True,
    )
    output = result.stdout
    summary = output[output.rfind("SUMMARY"):] if "SUMMARY" in output else output[-3000:]
    print(summary)
    assert result.returncode == 0, output[-12000:]
    assert "Failures:" not in summary and "Errors:" not in summary, summary
    tested = re.search(r"Tested: (\d+)", summary)
    assert tested and int(tested.group(1)) >= 30, summary  # every operation of the schema ran
