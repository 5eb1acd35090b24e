"""Migration 0006 makes ``Participant.step`` plain text: every stored step is kept, forwards and
backwards, and a registered step no built-in choice names can be stored."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from spotlight_study.participation.models import Participant

from ..conftest import Walker

BEFORE = [("participation", "0005_writing_process")]
AFTER = [("participation", "0006_participant_step_plain_text")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_plain_text_step_keeps_every_stored_step_both_ways(client, demo_study):
    """Steps saved before 0006 and after it survive the migration forwards and backwards."""
    walker = Walker(client, demo_study.slug)
    walker.enter()
    walker.consent()  # a real participant, now on the instructions
    try:
        old_apps = _migrate(BEFORE)
        OldParticipant = old_apps.get_model("participation", "Participant")
        real = OldParticipant.objects.get(prolific_pid=walker.pid)
        assert real.step == "instructions"
        made = {}
        for n, step in enumerate(("consent", "training", "reread", "task", "survey", "done")):
            row = OldParticipant.objects.create(
                study_id=real.study_id, prolific_pid=f"{n:024x}", prolific_study_id="s" * 24,
                prolific_session_id="x" * 24, cell_index=0, cell_plan=[], assignment_counts={},
                assignment_seed=n, shuffle_seed=n, step=step,
            )
            made[row.pk] = step
        made[real.pk] = "instructions"
        _migrate(AFTER)
        assert dict(Participant.objects.values_list("pk", "step")) == made
        # A step that no old choice names (a page kind registered later) is stored as it is.
        Participant.objects.filter(pk=real.pk).update(step="attention_check")
        made[real.pk] = "attention_check"
        old_apps = _migrate(BEFORE)
        back = old_apps.get_model("participation", "Participant")
        assert dict(back.objects.values_list("pk", "step")) == made
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    assert dict(Participant.objects.values_list("pk", "step")) == made
