"""A small fake of Prolific's API, served on 127.0.0.1 for the tests (no mocking of httpx).

It implements the endpoints the platform uses with realistic payloads (Prolific's API
reference): studies (create, get, transition), a study's submissions with ``_links.next``
paging, one submission, submission transitions with Prolific's validation of rejections,
request-return, bulk approve (at most 1,000 ids), bonus set-up and pay, messages (one and bulk), a workspace's balance, webhook secrets and subscriptions (created,
confirmed with ``X-Hook-Secret``, listed, deleted), paid screen-outs of
ACTIVE submissions (the study needs a ``FIXED_SCREENOUT`` code), and the demographic
export (CSV text, at most 15 filters and two different filter combinations per study). Errors come in
Prolific's shape ``{"error": {"status", "error_code", "title", "detail"}}``, except unknown
paths, which answer the flat ``{"detail": "Not found."}``.

Tests script failures with :meth:`FakeProlific.fail` (e.g. a 429, then success) and read every
request back from :attr:`FakeProlific.calls`.
"""
from __future__ import annotations

import csv
import io
import json
import re
import secrets
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..local_http import ThreadServer

PREFIX = "/api/v1/"
# The participant columns of Prolific's demographic export, after the submission columns.
DEMOGRAPHIC_HEADERS = (
    "Age", "Sex", "Ethnicity simplified", "Country of birth", "Country of residence",
    "Nationality", "Language", "Student status", "Employment status",
)


@dataclass
class Call:
    """One request the fake received."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    authorization: str


@dataclass
class FakeProlific:
    """The fake server's state. ``start()`` serves it; ``base_url`` is the API's base URL."""

    token: str = field(default_factory=lambda: f"test-token-{secrets.token_hex(8)}")
    page_size: int = 2
    # After the last page, serve the last page again under another URL whose next link points
    # back to page 2: the client must deduplicate and stop at the loop.
    repeat_and_loop: bool = False
    calls: list[Call] = field(default_factory=list)
    studies: dict[str, dict] = field(default_factory=dict)
    submissions: dict[str, dict] = field(default_factory=dict)  # id -> submission
    bonuses: dict[str, dict] = field(default_factory=dict)
    screen_outs: list[dict] = field(default_factory=list)  # bodies of accepted screen-outs
    messages: list[dict] = field(default_factory=list)  # one per recipient of a sent message
    balances: dict[str, int] = field(default_factory=dict)  # workspace id -> available (minor)
    hook_secrets: dict[str, dict] = field(default_factory=dict)  # workspace id -> its secret
    hook_subscriptions: dict[str, dict] = field(default_factory=dict)  # id -> subscription
    hook_confirmations: dict[str, str] = field(default_factory=dict)  # id -> X-Hook-Secret
    # study id -> the demographic rows of its export, keyed by Prolific's CSV headers.
    demographics: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    # study id -> the distinct filter combinations exported so far (Prolific allows two).
    demographic_exports: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    scripted: dict[tuple[str, str], list[tuple[int, Any, dict]]] = field(default_factory=lambda: defaultdict(list))
    # Further workspaces, each with its own token (token -> workspace id): a token sees only the
    # studies (and their submissions) of its workspace; ``token`` sees those of no workspace.
    workspace_tokens: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> "FakeProlific":
        """Serve on a free port of 127.0.0.1 in a daemon thread."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _handle(self) -> None:
                fake._dispatch(self)

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = ThreadServer(Handler).start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self.server.stop()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self.server.origin

    @property
    def base_url(self) -> str:
        """The API base URL, ``http://127.0.0.1:PORT/api/v1/``."""
        return self.origin + PREFIX

    # --- test helpers ------------------------------------------------------------------------

    def fail(self, method: str, path: str, status: int, body: Any = None, times: int = 1, headers: dict | None = None) -> None:
        """Answer the next ``times`` requests to ``method path`` (path after /api/v1/) with ``status``."""
        for _ in range(times):
            self.scripted[(method, path)].append((status, body, headers or {}))

    def count(self, method: str, path_regex: str) -> int:
        """How many requests matched (path without the /api/v1/ prefix)."""
        return sum(1 for c in self.calls if c.method == method and re.fullmatch(path_regex, c.path))

    def add_workspace(self) -> tuple[str, str]:
        """Another workspace with its own API token; returns ``(workspace id, token)``."""
        workspace, token = secrets.token_hex(12), f"test-token-{secrets.token_hex(8)}"
        self.workspace_tokens[token] = workspace
        return workspace, token

    def add_study(
        self, study_id: str | None = None, status: str = "ACTIVE", places: int = 0, workspace: str | None = None
    ) -> str:
        """A study that exists on Prolific (as if made in Prolific's app), with ``places``, in
        ``workspace`` (from :meth:`add_workspace`; ``None``: the one of :attr:`token`)."""
        study_id = study_id or secrets.token_hex(12)
        self.studies[study_id] = {"id": study_id, "status": status, "name": "Existing study",
                                  "total_available_places": places}
        if workspace is not None:
            self.studies[study_id]["workspace"] = workspace
        return study_id

    def calls_with(self, token: str) -> list[Call]:
        """The requests that carried ``token``."""
        return [c for c in self.calls if c.authorization == f"Token {token}"]

    def _workspace_of(self, path: str, body: Any) -> set[str | None]:
        """The workspaces of the studies a request touches (by study or submission id in its
        path, or the ids of a bulk approval); empty when it names none known here."""
        study_ids = set()
        if g := re.match(r"studies/([0-9a-f]{24})/", path):
            study_ids.add(g[1])
        sub_ids = []
        if g := re.match(r"submissions/([0-9a-f]{24})/", path):
            sub_ids.append(g[1])
        if path == "submissions/bulk-approve/" and isinstance(body, dict):
            sub_ids += [str(i) for i in body.get("submission_ids") or []]
        study_ids |= {self.submissions[i]["study_id"] for i in sub_ids if i in self.submissions}
        return {self.studies[i].get("workspace") for i in study_ids if i in self.studies}

    def add_submission(
        self, study_id: str, *, participant_id: str | None = None, submission_id: str | None = None,
        status: str = "ACTIVE", study_code: str | None = None,
    ) -> dict:
        """A submission of ``study_id``; returns it (ids are 24 hex characters)."""
        sub = {
            "id": submission_id or secrets.token_hex(12),
            "participant_id": participant_id or secrets.token_hex(12),
            "study_id": study_id,
            "status": status,
            "started_at": "2025-05-01T10:00:00.000000Z",
            "completed_at": None if status in ("RESERVED", "ACTIVE") else "2025-05-01T10:12:00.000000Z",
            "has_siblings": False,
            "study_code": study_code,
            "return_requested": None,
        }
        self.submissions[sub["id"]] = sub
        return sub

    def add_demographics(self, study_id: str, submission: dict, **values: Any) -> dict:
        """A row of ``study_id``'s demographic export for ``submission`` (from
        :meth:`add_submission`). ``values`` by Prolific's header, e.g. ``Age="34"``,
        ``Sex="Female"``, ``Country_of_residence="United Kingdom"`` (``_`` for a space); the
        headers not given get ``DATA_EXPIRED``, as Prolific writes for unanswered questions."""
        row = {
            "Submission id": submission["id"], "Participant id": submission["participant_id"],
            "Status": submission["status"], "Custom study tncs accepted at": "Not Applicable",
            "Started at": submission["started_at"], "Completed at": submission["completed_at"] or "",
            "Reviewed at": "", "Archived at": "", "Time taken": "733",
            "Completion code": submission["study_code"] or "", "Total approvals": "120",
        }
        for header in DEMOGRAPHIC_HEADERS:
            row[header] = "DATA_EXPIRED"
        row.update({k.replace("_", " "): str(v) for k, v in values.items()})
        self.demographics[study_id].append(row)
        return row

    # --- serving -------------------------------------------------------------------------

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict | None = None) -> None:
        # bytes are sent as they are (the CSV of the demographic export), the rest as JSON.
        data = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/csv" if isinstance(body, bytes) else "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def error(status: int, error_code: int, title: str, detail: Any) -> dict:
        """Prolific's error body."""
        return {
            "error": {
                "status": status,
                "error_code": error_code,
                "title": title,
                "detail": detail,
                "additional_information": f"/api/v1/errors/{error_code}/",
                "traceback": None,
                "interactive": False,
            }
        }

    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = url.path[len(PREFIX):] if url.path.startswith(PREFIX) else url.path
        auth = h.headers.get("Authorization", "")
        with self.lock:
            self.calls.append(Call(h.command, path, parse_qs(url.query), body, auth))
            token = auth.removeprefix("Token ")
            caller = self.workspace_tokens.get(token) if token != self.token else None
            if token != self.token and token not in self.workspace_tokens:
                answer = (401, self.error(401, 140100, "Unauthorized", "Invalid token."), {})
            elif self._workspace_of(path, body) - {caller}:
                # Another workspace's study: Prolific does not show it to this token.
                answer = (404, self.error(404, 140404, "Not found", "No such study in your workspace."), {})
            else:
                scripted = self.scripted.get((h.command, path))
                answer = scripted.pop(0) if scripted else None
        if answer is not None:
            return self._send(h, answer[0], answer[1], answer[2])
        with self.lock:
            status, payload, headers = self._route(h.command, path, parse_qs(url.query), body)
        self._send(h, status, payload, headers)

    def _route(self, method: str, path: str, query: dict, body: Any) -> tuple[int, Any, dict]:
        m = re.fullmatch
        if method == "POST" and path == "studies/":
            return self._study_create(body)
        if (g := m(r"studies/([0-9a-f]{24})/", path)) and method == "GET":
            study = self.studies.get(g[1])
            return (200, study, {}) if study else (404, self.error(404, 140404, "Not found", "No such study."), {})
        if (g := m(r"studies/([0-9a-f]{24})/", path)) and method == "PATCH":
            return self._study_update(g[1], body or {})
        if (g := m(r"studies/([0-9a-f]{24})/transition/", path)) and method == "POST":
            return self._study_transition(g[1], body or {})
        if (g := m(r"studies/([0-9a-f]{24})/demographic-export/", path)) and method == "POST":
            return self._demographic_export(g[1], body or {})
        if (g := m(r"studies/([0-9a-f]{24})/screen-out-submissions/", path)) and method == "POST":
            return self._screen_out(g[1], body or {})
        if (g := m(r"studies/([0-9a-f]{24})/submissions/", path)) and method == "GET":
            return self._submission_page(g[1], (query.get("page") or ["1"])[0])
        if (g := m(r"submissions/([0-9a-f]{24})/", path)) and method == "GET":
            sub = self.submissions.get(g[1])
            if sub is None:
                return 404, {"detail": "Not found."}, {}
            detail = {k: v for k, v in sub.items() if k not in ("participant_id", "study_code")}
            return 200, {**detail, "participant": sub["participant_id"], "entered_code": sub["study_code"]}, {}
        if (g := m(r"submissions/([0-9a-f]{24})/transition/", path)) and method == "POST":
            return self._submission_transition(g[1], body or {})
        if (g := m(r"submissions/([0-9a-f]{24})/request-return/", path)) and method == "POST":
            sub = self.submissions.get(g[1])
            if sub is None or not (body or {}).get("request_return_reasons"):
                return 400, self.error(400, 140200, "Bad request", "request_return_reasons is required."), {}
            sub["return_requested"] = "2025-05-02T09:30:00Z"
            return 200, {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                         "return_requested": sub["return_requested"]}, {}
        if (g := m(r"workspaces/([0-9a-f]{24})/balance/", path)) and method == "GET":
            if g[1] not in self.balances:
                return 404, self.error(404, 140404, "Not found", "No such workspace."), {}
            available = self.balances[g[1]]
            return 200, {"currency_code": "GBP", "total_balance": available + 1000,
                         "balance_breakdown": {"rewards": 0, "fees": 0, "vat": 0},
                         "available_balance": available,
                         "available_balance_breakdown": {"rewards": available, "fees": 0, "vat": 0}}, {}
        if path.startswith("hooks/"):
            return self._hooks(method, path, query, body or {})
        if method == "POST" and path in ("messages/", "messages/bulk/"):
            return self._message(path, body or {})
        if method == "POST" and path == "submissions/bulk-approve/":
            return self._bulk_approve(body or {})
        if method == "POST" and path == "submissions/bonus-payments/":
            return self._bonus_setup(body or {})
        if (g := m(r"bulk-bonus-payments/([0-9a-f]{24})/pay/", path)) and method == "POST":
            bonus = self.bonuses.get(g[1])
            if bonus is None:
                return 404, self.error(404, 140404, "Not found", "No such bulk bonus payment."), {}
            bonus["paid"] = bonus.get("paid", 0) + 1
            return 202, f"Bulk bonus payment with ID {g[1]} is being processed asynchronously.", {}
        return 404, {"detail": "Not found."}, {}

    def _study_create(self, body: dict) -> tuple[int, Any, dict]:
        missing = [k for k in ("name", "description", "external_study_url", "reward",
                               "total_available_places", "estimated_completion_time",
                               "completion_codes") if not body.get(k)]
        if missing:
            return 400, self.error(400, 140100, "Request validation failed.",
                                   {k: ["This field is required."] for k in missing}), {}
        study_id = secrets.token_hex(12)
        study = {**body, "id": study_id, "status": "UNPUBLISHED"}
        self.studies[study_id] = study
        return 201, study, {}

    def _demographic_export(self, study_id: str, body: dict) -> tuple[int, Any, dict]:
        if study_id not in self.studies:
            return 404, self.error(404, 140404, "Not found", "No such study."), {}
        filters = body.get("filters") or []
        if not isinstance(filters, list) or len(filters) > 15:
            return 400, self.error(400, 140100, "Request validation failed.",
                                   {"filters": ["You may select up to 15 filters per export."]}), {}
        combination = json.dumps(sorted(json.dumps(f, sort_keys=True) for f in filters))
        done = self.demographic_exports[study_id]
        if combination not in done:
            if len(done) >= 2:
                return 400, self.error(400, 140100, "Export limit reached.",
                                       "You are limited to 2 different filter export requests."), {}
            done.append(combination)
        rows = self.demographics.get(study_id) or []
        out = io.StringIO(newline="")
        headers = list(rows[0]) if rows else ["Submission id", "Participant id", "Status", *DEMOGRAPHIC_HEADERS]
        writer = csv.DictWriter(out, fieldnames=headers, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)
        return 200, out.getvalue().encode(), {}

    def _screen_out(self, study_id: str, body: dict) -> tuple[int, Any, dict]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, self.error(404, 140404, "Not found", "No such study."), {}
        codes = study.get("completion_codes")
        if codes is not None and not any(c.get("code_type") == "FIXED_SCREENOUT" for c in codes):
            return 400, self.error(400, 140100, "Bad request",
                                   "This study has no FIXED_SCREENOUT completion code."), {}
        ids = body.get("submission_ids") or []
        bad = [i for i in ids if (self.submissions.get(i) or {}).get("study_id") != study_id
               or self.submissions[i]["status"] != "ACTIVE"]
        if not ids or bad or not isinstance(body.get("bonus_per_submission"), (int, float)):
            return 400, self.error(400, 140100, "Request validation failed.",
                                   {"submission_ids": [f"Not ACTIVE in this study: {', '.join(bad) or '-'}"]}), {}
        for i in ids:
            self.submissions[i]["status"] = "SCREENED OUT"
        if body.get("increase_places"):
            study["total_available_places"] = int(study.get("total_available_places") or 0) + len(ids)
        self.screen_outs.append(dict(body))
        return 200, {"submission_ids": ids}, {}

    def _study_update(self, study_id: str, body: dict) -> tuple[int, Any, dict]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, self.error(404, 140404, "Not found", "No such study."), {}
        published = study["status"] != "UNPUBLISHED"
        allowed = {"internal_name", "total_available_places"} if published else set(body)
        errors = {k: ["This field cannot be changed after publishing."] for k in body if k not in allowed}
        places = body.get("total_available_places")
        if places is not None and (not isinstance(places, int) or places < int(study.get("total_available_places") or 0)):
            errors["total_available_places"] = ["You can only increase the number of places."]
        if errors:
            return 400, self.error(400, 140100, "Request validation failed.", errors), {}
        study.update(body)
        return 200, study, {}

    def _message(self, path: str, body: dict) -> tuple[int, Any, dict]:
        ids = [body.get("recipient_id")] if path == "messages/" else body.get("ids")
        errors = {}
        if not ids or not all(isinstance(i, str) and i for i in ids):
            errors["ids" if path != "messages/" else "recipient_id"] = ["This field is required."]
        if not (body.get("body") or "").strip():
            errors["body"] = ["This field is required."]
        if body.get("study_id") not in self.studies:
            errors["study_id"] = ["Unknown study."]
        if errors:
            return 400, self.error(400, 140100, "Request validation failed.", errors), {}
        for i in ids:
            self.messages.append({"recipient_id": i, "body": body["body"], "study_id": body["study_id"]})
        return (201, {"id": secrets.token_hex(12)}, {}) if path == "messages/" else (204, None, {})

    def _hooks(self, method: str, path: str, query: dict, body: dict) -> tuple[int, Any, dict]:
        workspace = (query.get("workspace_id") or [body.get("workspace_id")])[0]
        if path == "hooks/secrets/" and method == "GET":
            secret = self.hook_secrets.get(workspace)
            return 200, {"results": [secret] if secret else []}, {}
        if path == "hooks/secrets/" and method == "POST":
            if not workspace:
                return 400, self.error(400, 140100, "Request validation failed.", {"workspace_id": ["Required."]}), {}
            self.hook_secrets[workspace] = {"id": secrets.token_hex(12), "value": secrets.token_urlsafe(32),
                                            "workspace_id": workspace}
            return 201, self.hook_secrets[workspace], {}
        if path == "hooks/subscriptions/" and method == "GET":
            return 200, {"results": [s for s in self.hook_subscriptions.values() if s["workspace_id"] == workspace]}, {}
        if path == "hooks/subscriptions/" and method == "POST":
            if workspace not in self.hook_secrets:
                return 400, self.error(400, 140100, "Bad request", "Create a secret for the workspace first."), {}
            if not str(body.get("target_url") or "").startswith("https://") or not body.get("event_type"):
                return 400, self.error(400, 140100, "Request validation failed.",
                                       {"target_url": ["An https URL is required."]}), {}
            sub = {"id": secrets.token_hex(12), "event_type": body["event_type"], "target_url": body["target_url"],
                   "workspace_id": workspace, "is_enabled": False}
            self.hook_subscriptions[sub["id"]] = sub
            self.hook_confirmations[sub["id"]] = secrets.token_hex(16)
            return 201, sub, {"X-Hook-Secret": self.hook_confirmations[sub["id"]]}
        if (g := re.fullmatch(r"hooks/subscriptions/([0-9a-f]{24})/", path)):
            sub = self.hook_subscriptions.get(g[1])
            if sub is None:
                return 404, self.error(404, 140404, "Not found", "No such subscription."), {}
            if method == "DELETE":
                del self.hook_subscriptions[g[1]]
                return 204, None, {}
            if method == "POST":
                if body.get("secret") != self.hook_confirmations.get(g[1]):
                    return 400, self.error(400, 140100, "Bad request", "Wrong X-Hook-Secret."), {}
                sub["is_enabled"] = True
                return 200, sub, {}
        return 404, {"detail": "Not found."}, {}

    def _study_transition(self, study_id: str, body: dict) -> tuple[int, Any, dict]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, self.error(404, 140404, "Not found", "No such study."), {}
        new = {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "AWAITING REVIEW"}.get(body.get("action"))
        if new is None:
            return 400, self.error(400, 140100, "Request validation failed.", {"action": ["Invalid action."]}), {}
        study["status"] = new
        return 200, study, {}

    def _submission_page(self, study_id: str, page: str) -> tuple[int, Any, dict]:
        subs = [s for s in self.submissions.values() if s["study_id"] == study_id]
        pages = [subs[i:i + self.page_size] for i in range(0, len(subs), self.page_size)] or [[]]
        link = f"{self.base_url}studies/{study_id}/submissions/?page="
        if page == "again":  # the last page served a second time, pointing back to page 2
            return 200, {"results": pages[-1], "_links": {"next": {"href": link + "2"}}, "meta": {"count": len(subs)}}, {}
        n = int(page)
        if n > len(pages):
            return 404, {"detail": "Invalid page."}, {}
        if n < len(pages):
            next_href = link + str(n + 1)
        else:
            next_href = link + "again" if self.repeat_and_loop else None
        return 200, {
            "results": [{k: v for k, v in s.items() if k != "return_requested"} for s in pages[n - 1]],
            "_links": {
                "self": {"href": link + str(n), "title": "Current"},
                "next": {"href": next_href, "title": "Next"},
                "previous": {"href": link + str(n - 1) if n > 1 else None, "title": "Previous"},
                "last": {"href": link + str(len(pages)), "title": "Last"},
            },
            "meta": {"count": len(subs)},
        }, {}

    def _submission_transition(self, sub_id: str, body: dict) -> tuple[int, Any, dict]:
        sub = self.submissions.get(sub_id)
        if sub is None:
            return 404, self.error(404, 140404, "Not found", "No such submission."), {}
        action = body.get("action")
        if action == "REJECT":
            errors = {}
            if not body.get("rejection_category"):
                errors["rejection_category"] = ["This field is required."]
            if len(body.get("message") or "") < 100:
                errors["message"] = ["Ensure this field has at least 100 characters."]
            if errors:
                return 400, self.error(400, 140100, "Request validation failed.", errors), {}
            sub["status"] = "REJECTED"
        elif action == "APPROVE":
            sub["status"] = "APPROVED"
        else:
            return 400, self.error(400, 140100, "Request validation failed.", {"action": ["Invalid."]}), {}
        return 200, sub, {}

    def _bulk_approve(self, body: dict) -> tuple[int, Any, dict]:
        ids = body.get("submission_ids") or []
        if len(ids) > 1000:
            return 400, self.error(400, 140100, "Request validation failed.", {"submission_ids": ["At most 1000."]}), {}
        for sub_id in ids:
            if sub_id in self.submissions and self.submissions[sub_id]["status"] == "AWAITING REVIEW":
                self.submissions[sub_id]["status"] = "APPROVED"
        return 200, "The request to bulk approve has been made successfully.", {}

    def _bonus_setup(self, body: dict) -> tuple[int, Any, dict]:
        study_id = body.get("study_id")
        lines = [line for line in (body.get("csv_bonuses") or "").split("\n") if line.strip()]
        known = {s["id"] for s in self.submissions.values() if s["study_id"] == study_id} | {
            s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id
        }
        amount = Decimal(0)
        bad = []
        for line in lines:
            ident, value = line.split(",")
            if ident not in known:
                bad.append(ident)
            amount += Decimal(value)
        if study_id not in self.studies or bad or not lines:
            return 400, self.error(400, 140300, "Bad bonus request.", f"Invalid ids: {', '.join(bad) or '-'}"), {}
        bonus_id = secrets.token_hex(12)
        minor = int(amount * 100)
        fees = round(minor / 3, 2)
        self.bonuses[bonus_id] = {"id": bonus_id, "study": study_id, "csv": body["csv_bonuses"], "paid": 0}
        return 201, {"id": bonus_id, "total_amount": minor + fees, "study": study_id, "amount": minor,
                     "fees": fees, "vat": 0}, {}
