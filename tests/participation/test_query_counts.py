"""What a participant request costs the database, asserted so that it cannot silently grow back
(docs/performance.md): the definition is never queried, sessions are never queried, a GET
reads the participant once and a POST locks it once and writes it once."""
from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import cell_counts
from spotlight_study.studies.models import Setting, TokenPattern

from ..conftest import Walker

#: The ceiling per request after the entry, transaction statements not counted.
MAX_QUERIES_PER_REQUEST = 3
#: A saved answer also costs its near-duplicate score (participation/writing.py): since issue 39
#: the sketch index's read (bounded, participation/near_duplicates.py), the candidates' texts
#: when there are any, and the insert of the answer's sketch: two or three statements, where
#: there was one read of every earlier answer of the setting before.
_ANSWER_SAVE = re.compile(r'^UPDATE "participation_taskresponse" SET "answer"')
_NEAR_DUPLICATE_READ = re.compile(
    r'^SELECT id, answer, near_duplicate_score FROM participation_taskresponse'
    r'|^SELECT 0, participant_id FROM \(SELECT participant_id FROM participation_answersketchkey'
    r'|^SELECT key_position, participant_id FROM participation_sketch_candidates'
    r'|^INSERT INTO participation_answersketchkey'
)
_TRANSACTION = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b", re.IGNORECASE)
# The definition's tables, and the session table; the study row may appear only as the join
# that brings its definition version along with the participant.
_FORBIDDEN = re.compile(
    r'studies_setting|studies_tokenpattern|django_session|FROM "studies_study"', re.IGNORECASE
)


def _statements(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if not _TRANSACTION.match(q["sql"])]


class CountingWalker(Walker):
    """A :class:`Walker` that records the statements of every request after the entry."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log: list[tuple[str, str, list[str]]] = []

    def _count(self, method: str, call):
        with CaptureQueriesContext(connection) as captured:
            response = call()
        step = Participant.objects.get(prolific_pid=self.pid).step
        self.log.append((method, step, _statements(captured)))
        return response

    def page(self):
        self.last_page = self._count("GET", lambda: self.client.get(self.step_url))
        return self.last_page

    def post(self, data: dict, token: str | None = None):
        payload = {"token": token or self.token(), **data}
        return self._count("POST", lambda: self.client.post(self.step_url, payload))


def test_every_request_of_a_flow_stays_under_the_query_ceiling(client, demo_study):
    """A whole flow, a refused answer and a refresh included: <= 3 statements per request (4
    for a saved answer, with its near-duplicate read), none
    on the definition or the sessions; GETs read the participant once; POSTs lock it once."""
    w = CountingWalker(client, demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.page()
    w.page()  # a refresh of the training page
    w.post({"answer_0": "   "})  # refused: kept as a draft on the row
    w.page()
    w.post({"answer_0": "The first group fishes by day, the second at night."})
    w.answer("Group 2 describes the doctor as a woman more often.")
    w.answer("Group 1 grows maize and beans, group 2 wheat.")
    final = w.survey()
    assert final.status_code == 302 and "prolific.com" in final["Location"]
    w.page()  # the done page
    assert len(w.log) == 16
    for method, step, statements in w.log:
        where = f"{method} on {step}: {statements}"
        saves = any(_ANSWER_SAVE.match(sql) for sql in statements)
        reads = sum(bool(_NEAR_DUPLICATE_READ.match(sql)) for sql in statements)
        assert (2 <= reads <= 3) if saves else reads == 0, where
        assert len(statements) <= MAX_QUERIES_PER_REQUEST + reads, where
        assert not any(_FORBIDDEN.search(sql) for sql in statements), where
        participant_reads = [
            s for s in statements
            if s.lstrip().upper().startswith("SELECT") and "participation_participant" in s
            and not _NEAR_DUPLICATE_READ.match(s)
        ]
        assert len(participant_reads) == 1, where
        if method == "GET":
            assert all(s.lstrip().upper().startswith(("SELECT", "UPDATE", "INSERT")) for s in statements)
        else:
            # One locked read first, then at most one write of the participant's row.
            assert statements[0].lstrip().upper().startswith("SELECT"), where
            if connection.features.has_select_for_update:
                assert "FOR UPDATE" in statements[0], where
            writes = [s for s in statements if re.match(r'\s*UPDATE "participation_participant"', s)]
            assert len(writes) == 1, where
    gets = {step: statements for method, step, statements in w.log if method == "GET"}
    assert len(gets["consent"]) == len(gets["instructions"]) == len(gets["done"]) == 1
    # A task page: the read and one statement that creates or touches the response row.
    task_gets = [s for method, step, s in w.log if method == "GET" and step in ("training", "task")]
    assert len(task_gets) >= 4
    for statements in task_gets:
        assert len(statements) == 2 and "ON CONFLICT" in statements[1], statements


def test_cell_counts_are_two_bounded_queries(client, demo_study):
    """The cell counts are two reads that do not grow with the study (issue 39; one grouped
    count of every holding participant before): the database's completed count per cell, and
    a grouped count of the in-progress participants of the abandonment window."""
    for _ in range(3):
        client.cookies.clear()
        Walker(client, demo_study.slug).enter()
    with CaptureQueriesContext(connection) as captured:
        counts = cell_counts(study=demo_study, n_cells=4)
    sql = [q["sql"] for q in captured.captured_queries]
    assert len(sql) == 2 and "participation_cellplacecount" in sql[0] and "GROUP BY" in sql[1]
    assert '"started_at" >=' in sql[1]
    assert sum(counts.values()) == 3 and max(counts.values()) == 1


@pytest.mark.parametrize("edit", ["study", "setting", "pattern"])
def test_an_edit_of_the_definition_reaches_the_next_page(walker, demo_study, edit):
    """Saving the study, a setting or a pattern retires the compiled plan in this process."""
    walker.enter()
    walker.consent()
    walker.instructions()
    assert "stars (more often in group 2)" in walker.page().content.decode()
    training = Setting.objects.get(study=demo_study, kind=Setting.Kind.TRAINING)
    if edit == "study":
        demo_study.pattern_intro_text = "A brand new introduction to the box."
        demo_study.save()
        expected = "A brand new introduction to the box."
    elif edit == "setting":
        training.group1_texts = ["A freshly edited text." for _ in training.group1_texts]
        training.save()
        expected = "A freshly edited text."
    else:
        pattern = TokenPattern.objects.filter(setting=training).first()
        pattern.tokens = ["moonlight"]
        pattern.save()
        expected = "moonlight (more often in group"
    assert expected in walker.page().content.decode()
