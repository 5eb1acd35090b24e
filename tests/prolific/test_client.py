"""The Prolific client against the fake Prolific server on 127.0.0.1 (real HTTP, no mocks)."""
from __future__ import annotations


import pytest

from spotlight_study.prolific.client import ProlificClient
from spotlight_study.prolific.errors import (
    ProlificAPIError,
    ProlificNotConfigured,
    ProlificPagingError,
    ProlificTransportError,
    ProlificValidationError,
)
from spotlight_study.prolific.payloads import CompletionCode, StudyDraft

from ..processes import free_port

LONG_MESSAGE = (
    "Your answer to the instruction check shows that the instructions were not read; this "
    "submission cannot be accepted under the study's stated criteria."
)


def draft(**overrides) -> StudyDraft:
    """A valid draft with three completion codes."""
    data = dict(
        name="Spot the difference",
        internal_name="spot",
        description="Compare two groups of short texts.",
        external_study_url="https://study.example.org/s/spot/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        estimated_completion_time=15,
        maximum_allowed_time=45,
        reward=200,
        total_available_places=48,
        completion_codes=(CompletionCode("C1", "COMPLETED", ({"action": "MANUALLY_REVIEW"},)),),
    )
    data.update(overrides)
    return StudyDraft(**data)


def test_every_request_carries_the_token(fake_prolific, prolific_client):
    """Requests send `Authorization: Token <token>`; a wrong token gets Prolific's 401 error."""
    study_id = fake_prolific.add_study()
    assert prolific_client.study_get(study_id)["id"] == study_id
    assert fake_prolific.calls[-1].authorization == f"Token {fake_prolific.token}"
    wrong = ProlificClient(token="wrong", base_url=fake_prolific.base_url, max_retries=3, sleep=lambda s: None)
    with pytest.raises(ProlificAPIError) as info:
        wrong.study_get(study_id)
    assert info.value.status_code == 401 and info.value.error_code == 140100
    assert fake_prolific.count("GET", rf"studies/{study_id}/") == 2  # 401 is not retried


def test_no_token_is_refused_before_any_request():
    """Without PROLIFIC_API_TOKEN the client cannot be built."""
    with pytest.raises(ProlificNotConfigured):
        ProlificClient(token="")


def test_paging_follows_next_links_dedupes_and_stops_at_a_loop(fake_prolific, prolific_client):
    """Five submissions over three pages, a repeated last page and a link back to page 2:
    five unique submissions and a bounded number of requests."""
    study_id = fake_prolific.add_study()
    fake_prolific.repeat_and_loop = True
    made = [fake_prolific.add_submission(study_id, status="AWAITING REVIEW") for _ in range(5)]
    records = prolific_client.study_submissions(study_id)
    assert [r.id for r in records] == [s["id"] for s in made]
    assert {r.participant_id for r in records} == {s["participant_id"] for s in made}
    # pages 1, 2, 3 and the repeated page; the link back to page 2 is not followed
    assert fake_prolific.count("GET", rf"studies/{study_id}/submissions/") == 4


def test_a_next_link_to_another_host_is_refused(fake_prolific, prolific_client):
    """The token is never sent to a host other than the API's."""
    study_id = fake_prolific.add_study()
    fake_prolific.fail(
        "GET", f"studies/{study_id}/submissions/", 200,
        {"results": [], "_links": {"next": {"href": "https://evil.example/steal"}}, "meta": {"count": 0}},
    )
    with pytest.raises(ProlificPagingError, match="evil.example"):
        prolific_client.study_submissions(study_id)


def test_429_then_success_is_retried_with_backoff(fake_prolific, prolific_client, sleeps):
    """A 429 on a read is retried after a backoff; the second answer is returned."""
    study_id = fake_prolific.add_study()
    fake_prolific.fail("GET", f"studies/{study_id}/", 429, {"detail": "Request was throttled."})
    assert prolific_client.study_get(study_id)["id"] == study_id
    assert fake_prolific.count("GET", rf"studies/{study_id}/") == 2
    assert len(sleeps.delays) == 1 and 0 < sleeps.delays[0] <= 0.01


def test_retry_after_header_sets_the_wait(fake_prolific, prolific_client, sleeps):
    """`Retry-After: 2` makes the client wait at least 2 seconds."""
    study_id = fake_prolific.add_study()
    fake_prolific.fail("GET", f"studies/{study_id}/", 429, {"detail": "Slow down."}, headers={"Retry-After": "2"})
    prolific_client.study_get(study_id)
    assert sleeps.delays == [2.0]


def test_persistent_5xx_gives_up_after_the_retries(fake_prolific, prolific_client, sleeps):
    """A read that keeps failing with 503 is tried 1 + max_retries times, with growing waits."""
    study_id = fake_prolific.add_study()
    fake_prolific.fail("GET", f"studies/{study_id}/", 503, {"detail": "Unavailable"}, times=10)
    with pytest.raises(ProlificAPIError) as info:
        prolific_client.study_get(study_id)
    assert info.value.status_code == 503 and info.value.detail == "Unavailable"
    assert fake_prolific.count("GET", rf"studies/{study_id}/") == 4
    assert len(sleeps.delays) == 3 and sleeps.delays[2] > sleeps.delays[0]


def test_network_errors_are_retried_then_reported():
    """A refused connection is retried for a read and ends in ProlificTransportError."""
    port = free_port()  # nothing listens there
    delays = []
    client = ProlificClient(token="t", base_url=f"http://127.0.0.1:{port}/api/v1/", max_retries=2,
                            backoff_seconds=0.001, sleep=delays.append, timeout_seconds=2)
    with pytest.raises(ProlificTransportError):
        client.study_get("a" * 24)
    assert len(delays) == 2


def test_error_in_prolifics_shape_is_read(fake_prolific, prolific_client):
    """`{"error": {...}}` becomes an exception with error_code, title and detail."""
    with pytest.raises(ProlificAPIError) as info:
        prolific_client.study_create(draft(reward=200, name=""))
    err = info.value
    assert (err.status_code, err.error_code, err.title) == (400, 140100, "Request validation failed.")
    assert err.detail == {"name": ["This field is required."]}
    assert "140100" in str(err) and fake_prolific.token not in str(err)


def test_flat_detail_error_is_read(fake_prolific, prolific_client):
    """A flat `{"detail": ...}` body is accepted too."""
    with pytest.raises(ProlificAPIError) as info:
        prolific_client.submission_get("f" * 24)
    assert info.value.status_code == 404 and info.value.detail == "Not found." and info.value.error_code is None


def test_creating_a_study_sends_the_documented_payload(fake_prolific, prolific_client):
    """The draft carries url_parameters, minutes, minor units and completion codes with actions."""
    created = prolific_client.study_create(draft())
    sent = fake_prolific.calls[-1].body
    assert created["status"] == "UNPUBLISHED" and len(created["id"]) == 24
    assert sent["prolific_id_option"] == "url_parameters"
    assert (sent["estimated_completion_time"], sent["maximum_allowed_time"], sent["reward"]) == (15, 45, 200)
    assert sent["completion_codes"] == [{"code": "C1", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}]


def test_creating_a_study_is_not_retried(fake_prolific, prolific_client):
    """A 503 on POST /studies/ is reported at once: a retry could create a second draft."""
    fake_prolific.fail("POST", "studies/", 503, {"detail": "Unavailable"})
    with pytest.raises(ProlificAPIError):
        prolific_client.study_create(draft())
    assert fake_prolific.count("POST", "studies/") == 1


def test_a_draft_without_the_url_placeholders_is_refused_before_sending(fake_prolific, prolific_client):
    """The study URL must carry PROLIFIC_PID, STUDY_ID and SESSION_ID placeholders."""
    url = "https://x.org/?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
    with pytest.raises(ProlificValidationError, match="SESSION_ID"):
        prolific_client.study_create(draft(external_study_url=url))
    assert fake_prolific.calls == []


def test_study_transitions(fake_prolific, prolific_client):
    """PUBLISH, PAUSE, START and STOP are sent as actions; anything else is refused locally."""
    study_id = prolific_client.study_create(draft())["id"]
    assert prolific_client.study_transition(study_id, "PUBLISH")["status"] == "ACTIVE"
    assert prolific_client.study_transition(study_id, "PAUSE")["status"] == "PAUSED"
    assert fake_prolific.calls[-1].body == {"action": "PAUSE"}
    with pytest.raises(ProlificValidationError):
        prolific_client.study_transition(study_id, "DELETE")


def test_reject_is_validated_before_sending(fake_prolific, prolific_client):
    """A short message or an unknown category never reaches Prolific; a valid one does."""
    study_id = fake_prolific.add_study()
    sub = fake_prolific.add_submission(study_id, status="AWAITING REVIEW")
    with pytest.raises(ProlificValidationError, match="100 characters"):
        prolific_client.submission_reject(sub["id"], rejection_category="FAILED_INSTRUCTIONS", message="Too short.")
    with pytest.raises(ProlificValidationError, match="rejection_category"):
        prolific_client.submission_reject(sub["id"], rejection_category="BAD", message=LONG_MESSAGE)
    assert fake_prolific.calls == []
    prolific_client.submission_reject(sub["id"], rejection_category="FAILED_INSTRUCTIONS", message=LONG_MESSAGE)
    assert fake_prolific.calls[-1].body == {
        "action": "REJECT", "rejection_category": "FAILED_INSTRUCTIONS", "message": LONG_MESSAGE,
    }
    assert fake_prolific.submissions[sub["id"]]["status"] == "REJECTED"


def test_bulk_approve_sends_at_most_1000_ids_per_request(fake_prolific, prolific_client):
    """2,500 ids go out in three requests of 1,000, 1,000 and 500."""
    ids = [f"{i:024x}" for i in range(2500)]
    assert prolific_client.submissions_bulk_approve(ids) == 3
    sizes = [len(c.body["submission_ids"]) for c in fake_prolific.calls if c.path == "submissions/bulk-approve/"]
    assert sizes == [1000, 1000, 500]
    sent = [i for c in fake_prolific.calls for i in c.body["submission_ids"]]
    assert sent == ids


def test_bonus_setup_then_pay(fake_prolific, prolific_client):
    """Set-up returns Prolific's bulk id and amounts in minor units; pay pays it once."""
    study_id = fake_prolific.add_study()
    a = fake_prolific.add_submission(study_id, status="APPROVED")
    b = fake_prolific.add_submission(study_id, status="APPROVED")
    setup = prolific_client.bonus_setup(study_id, f"{a['id']},4.25\n{b['participant_id']},4.25")
    assert setup.amount == 850 and setup.total_amount > 850 and len(setup.id) == 24
    prolific_client.bonus_pay(setup.id)
    assert fake_prolific.bonuses[setup.id]["paid"] == 1


def test_bonus_pay_is_never_retried(fake_prolific, prolific_client, sleeps):
    """A 502 on pay is reported after exactly one request, although reads would retry 3 times."""
    study_id = fake_prolific.add_study()
    sub = fake_prolific.add_submission(study_id, status="APPROVED")
    setup = prolific_client.bonus_setup(study_id, f"{sub['id']},1.00")
    fake_prolific.fail("POST", f"bulk-bonus-payments/{setup.id}/pay/", 502, {"detail": "Bad gateway"})
    with pytest.raises(ProlificAPIError) as info:
        prolific_client.bonus_pay(setup.id)
    assert info.value.status_code == 502
    assert fake_prolific.count("POST", rf"bulk-bonus-payments/{setup.id}/pay/") == 1
    assert sleeps.delays == []


def test_bonus_setup_error_names_the_bad_ids(fake_prolific, prolific_client):
    """Prolific's 400 for ids that did not take part is raised with its detail."""
    study_id = fake_prolific.add_study()
    with pytest.raises(ProlificAPIError) as info:
        prolific_client.bonus_setup(study_id, f"{'e' * 24},1.00")
    assert info.value.error_code == 140300 and "e" * 24 in str(info.value.detail)
