#!/usr/bin/env python
"""Load benchmark of the participant flow: many simulated Prolific participants at once.

Each simulated participant has its own ``httpx.AsyncClient`` (its own cookies and connection),
a fresh random PROLIFIC_PID, and walks the whole flow exactly like a browser without JavaScript
would (plus the telemetry that ``static/js/flow.js`` would add):

    GET  /s/<slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..   -> 302 /s/<slug>/step/
    GET  step (consent)        POST csrfmiddlewaretoken, token, decision=agree   -> 302 step
    GET  step (instructions)   POST csrfmiddlewaretoken, token                   -> 302 step
    GET  step (training)       POST csrfmiddlewaretoken, token, answer_0, client_events -> 302 step
    GET  step (task 1..k)      POST (same, answer_1..answer_k)                   -> 302 step
    GET  step (survey)         POST csrfmiddlewaretoken, token, c__*/b__* radios, comment
                                                 -> 302 https://app.prolific.com/...?cc=<code>

Hidden values (CSRF token, ``token``) and the survey's radio names are parsed from each page.
Redirects are never followed automatically; the final Prolific redirect is only checked.

Usage (from the repository root, with the repo's venv):

    .venv/bin/python bench/load.py --n 400 --concurrency 50 --start-server
    .venv/bin/python bench/load.py --n 400 --concurrency 50 --base-url http://127.0.0.1:8000 \\
        --database-url postgres://postgres@127.0.0.1:5432/spotlight

See bench/README.md for what is measured and the pass/fail target.
"""
from __future__ import annotations

import argparse
import asyncio
import html
import json
import math
import os
import random
import re
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/spotlight_bench"
DEFAULT_FIXTURE = REPO / "fixtures" / "spotlight-replication.yaml"
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
MAX_PAGES_PER_FLOW = 20  # consent, instructions, training, k tasks, survey: far below this

# Target of the one-line verdict.
TARGET_P99_MS = 250.0
TARGET_FLOWS_PER_S = 50.0

# One SSL context for all clients: httpx would otherwise build (and load CA files into) a new
# context for every AsyncClient, which costs the load generator several ms of CPU per
# participant. It is never used: all traffic is plain HTTP to 127.0.0.1.
_SSL_CTX = ssl.create_default_context()


# --- HTML parsing ----------------------------------------------------------------------------

_INPUT_RE = re.compile(r"<input\b[^>]*>", re.IGNORECASE)
_TEXTAREA_RE = re.compile(r"<textarea\b[^>]*\bname=\"([^\"]+)\"", re.IGNORECASE)
_BUTTON_RE = re.compile(r"<button\b[^>]*>", re.IGNORECASE)
_ATTR_RE = re.compile(r"([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+)))?")
_MESSAGE_RE = re.compile(r"<ul class=\"messages\">(.*?)</ul>", re.DOTALL)


def _attrs(tag: str) -> dict[str, str]:
    out = {}
    for m in _ATTR_RE.finditer(tag[tag.index(" ") + 1 if " " in tag else len(tag):]):
        name = m.group(1).lower()
        value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        out[name] = html.unescape(value) if value is not None else ""
    return out


@dataclass
class Page:
    """The form of a step page: hidden values, radio groups, text areas, submit buttons."""

    hidden: dict[str, str]
    radios: dict[str, list[str]]
    textareas: set[str]
    buttons: list[dict[str, str]]
    messages: str

    @property
    def token(self) -> str | None:
        return self.hidden.get("token")

    @property
    def kind(self) -> str:
        """``consent``, ``instructions``, ``training``, ``task``, ``survey`` or ``?``."""
        return (self.token or "?").split(":", 1)[0]

    @property
    def step_and_index(self) -> str:
        """The token without its participant tag (``task:1:3f9c0a12be`` -> ``task:1``)."""
        return ":".join((self.token or "?").split(":")[:2])


def parse_page(text: str) -> Page:
    hidden: dict[str, str] = {}
    radios: dict[str, list[str]] = defaultdict(list)
    for tag in _INPUT_RE.findall(text):
        a = _attrs(tag)
        t = a.get("type", "text").lower()
        if t == "hidden" and "name" in a:
            hidden[a["name"]] = a.get("value", "")
        elif t == "radio" and "name" in a:
            radios[a["name"]].append(a.get("value", ""))
    buttons = [_attrs(b) for b in _BUTTON_RE.findall(text)]
    m = _MESSAGE_RE.search(text)
    msg = re.sub(r"<[^>]+>", " ", m.group(1)).strip() if m else ""
    return Page(hidden, dict(radios), set(_TEXTAREA_RE.findall(text)), buttons, " ".join(msg.split()))


# --- measurements ----------------------------------------------------------------------------


@dataclass
class Stats:
    latencies_ms: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)
    requests: int = 0
    exceptions: int = 0

    def add(self, kind: str, ms: float, status: int) -> None:
        self.latencies_ms.append(ms)
        self.by_kind[kind].append(ms)
        self.statuses[status] += 1


@dataclass
class FlowResult:
    pid: str
    ok: bool
    error: str | None = None
    pages: list[str] = field(default_factory=list)


class FlowError(Exception):
    pass


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


# --- one participant -------------------------------------------------------------------------


class Runner:
    def __init__(self, *, base_url: str, slug: str, completion_code: str, request_timeout: float):
        self.base_url = base_url.rstrip("/")
        self.origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.base_url))
        self.netloc = urlsplit(self.base_url).netloc
        self.slug = slug
        self.completion_code = completion_code
        self.request_timeout = request_timeout
        self.entry_path = f"/s/{slug}/"
        self.step_path = f"/s/{slug}/step/"
        self.stats = Stats()

    async def _request(self, client: httpx.AsyncClient, method: str, path: str, **kw) -> tuple[httpx.Response, float]:
        self.stats.requests += 1
        t0 = time.perf_counter()
        try:
            r = await client.request(method, path, **kw)
        except Exception as exc:  # connection refused/reset, timeout, protocol error ...
            self.stats.exceptions += 1
            raise FlowError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        return r, (time.perf_counter() - t0) * 1000

    def _check_status(self, r: httpx.Response, expect: int, what: str) -> None:
        if r.status_code != expect:
            detail = ""
            if r.status_code < 400 and r.status_code >= 300:
                detail = f" -> {r.headers.get('location')}"
            raise FlowError(f"{what}: HTTP {r.status_code} (expected {expect}){detail}")

    def _location(self, r: httpx.Response) -> tuple[str, str]:
        """``("step", "")``, ``("prolific", cc)`` or ``("other", url)`` for a redirect."""
        loc = r.headers.get("location", "")
        parts = urlsplit(loc)
        if loc.startswith(PROLIFIC_COMPLETE_URL):
            return "prolific", (parse_qs(parts.query).get("cc") or [""])[0]
        if parts.netloc in ("", self.netloc) and parts.path == self.step_path:
            return "step", ""
        return "other", loc

    def _post_data(self, page: Page, rng: random.Random) -> dict[str, str]:
        kind = page.kind
        if "csrfmiddlewaretoken" not in page.hidden or page.token is None:
            raise FlowError(f"{kind} page: no csrfmiddlewaretoken/token hidden field")
        data = {"csrfmiddlewaretoken": page.hidden["csrfmiddlewaretoken"], "token": page.token}
        if kind == "consent":
            if not any(b.get("name") == "decision" and b.get("value") == "agree" for b in page.buttons):
                raise FlowError("consent page: no decision=agree button")
            data["decision"] = "agree"
        elif kind == "instructions":
            pass
        elif kind in ("training", "task"):
            # Each task's box is named answer_<position> (see participation.forms.AnswerForm).
            boxes = sorted(n for n in page.textareas if n.startswith("answer_"))
            if len(boxes) != 1 or "client_events" not in page.hidden:
                raise FlowError(f"{kind} page: no answer_<position> textarea / client_events field")
            data[boxes[0]] = (
                "In group 1 the angler fishes during the day in the sun, in group 2 at night "
                "under the moon and the stars."
                if kind == "training"
                else "Group 2 describes the person more often as a woman and mentions family; "
                f"group 1 is more about work. (bench answer {rng.randrange(10**6)})"
            )
            data["client_events"] = json.dumps(
                {
                    "paste_count": 0,
                    "paste_chars": 0,
                    "hidden_ms": 0,
                    "blur_count": 1,
                    "events": [{"t": rng.randrange(5_000, 90_000), "type": "blur"}],
                }
            )
        elif kind == "survey":
            names = [n for n in page.radios if n.startswith(("c__", "b__"))]
            if not names:
                raise FlowError("survey page: no c__*/b__* radio fields")
            for name in names:
                values = page.radios[name]
                if sorted(values) != ["1", "2", "3", "4", "5"]:
                    raise FlowError(f"survey page: {name} has values {values}, not 1..5")
                data[name] = rng.choice(values)
            data["comment"] = "" if rng.random() < 0.7 else "All fine, thank you."
        else:
            raise FlowError(f"unknown page (token {page.token!r}; messages: {page.messages!r})")
        return data

    async def flow(self, index: int) -> FlowResult:
        pid = secrets.token_hex(12)
        result = FlowResult(pid=pid, ok=False)
        rng = random.Random(pid)
        async with httpx.AsyncClient(
            base_url=self.base_url,
            follow_redirects=False,
            timeout=self.request_timeout,
            verify=_SSL_CTX,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            headers={"User-Agent": "spotlight-bench/1 (httpx)"},
            trust_env=False,  # never route through a proxy from the environment
        ) as client:
            try:
                params = {
                    "PROLIFIC_PID": pid,
                    "STUDY_ID": secrets.token_hex(12),
                    "SESSION_ID": secrets.token_hex(12),
                }
                r, ms = await self._request(client, "GET", self.entry_path, params=params)
                self.stats.add("GET entry", ms, r.status_code)
                self._check_status(r, 302, "entry")
                where, _ = self._location(r)
                if where != "step":
                    raise FlowError(f"entry redirected to {r.headers.get('location')!r}")
                seen: list[str] = []
                for _ in range(MAX_PAGES_PER_FLOW):
                    r, ms = await self._request(client, "GET", self.step_path)
                    page = parse_page(r.text) if r.status_code == 200 else None
                    kind = page.kind if page else "?"
                    self.stats.add(f"GET {kind}", ms, r.status_code)
                    self._check_status(r, 200, f"GET step after {seen[-1:] or ['entry']}")
                    if page.step_and_index in seen:
                        raise FlowError(
                            f"page {page.token} shown again after it was submitted "
                            f"(messages: {page.messages!r})"
                        )
                    seen.append(page.step_and_index)
                    result.pages = seen
                    data = self._post_data(page, rng)
                    r, ms = await self._request(
                        client,
                        "POST",
                        self.step_path,
                        data=data,
                        headers={"Origin": self.origin, "Referer": self.base_url + self.step_path},
                    )
                    self.stats.add(f"POST {kind}", ms, r.status_code)
                    self._check_status(r, 302, f"POST {page.token}")
                    where, value = self._location(r)
                    if where == "prolific":
                        if kind != "survey":
                            raise FlowError(f"ended at {page.token} with Prolific code {value!r}")
                        if value != self.completion_code:
                            raise FlowError(f"completion code {value!r}, expected {self.completion_code!r}")
                        # The survey token carries the last task index (``survey:<k-1>``).
                        n_tasks = len(seen) - 4
                        expected = (
                            ["consent:0", "instructions:0", "training:0"]
                            + [f"task:{i}" for i in range(max(n_tasks, 1))]
                            + [f"survey:{max(n_tasks, 1) - 1}"]
                        )
                        if seen != expected:
                            raise FlowError(f"unexpected page sequence {seen} (expected {expected})")
                        result.ok = True
                        return result
                    if where != "step":
                        raise FlowError(f"POST {page.token} redirected to {value!r}")
                raise FlowError(f"no completion after {MAX_PAGES_PER_FLOW} pages")
            except FlowError as exc:
                result.error = str(exc)
                return result


# --- the server (--start-server) -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_DB_LOCK_CONN = None  # holds the run's advisory lock until the process exits


def recreate_database(url: str, allow_any_name: bool, force: bool = False) -> None:
    """Drop and create the database of ``url`` (local host, name with 'bench' unless allowed).

    Two runs on one database would drop each other's data, so the run takes a PostgreSQL
    advisory lock named after the database (held until this process exits) and refuses while
    other sessions are connected to the database (a server or another run), unless ``force``.
    """
    global _DB_LOCK_CONN
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if parts.hostname not in LOCAL_HOSTS:
        sys.exit(f"Refusing to drop a database on a non-local host: {parts.hostname}")
    if not name or ("bench" not in name and not allow_any_name):
        sys.exit(f"Refusing to drop database {name!r}: its name has no 'bench' (use --allow-drop-any).")
    conn = psycopg.connect(url, dbname="postgres", autocommit=True)
    if not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (f"spotlight-bench:{name}",)).fetchone()[0]:
        sys.exit(f"Another bench run is using database {name!r}; not dropping it (wait, or use another --database-url).")
    others = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (name,)
    ).fetchone()[0]
    if others and not force:
        sys.exit(f"{others} session(s) are connected to database {name!r} (a server or another run?); "
                 "not dropping it. Stop them, use another --database-url, or pass --force-drop.")
    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    _DB_LOCK_CONN = conn
    print(f"database: dropped and created {name!r}")


@dataclass
class Server:
    proc: subprocess.Popen
    base_url: str
    config: str
    log_path: Path


def _run(cmd: list[str], env: dict[str, str]) -> None:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        sys.exit(f"failed: {' '.join(cmd)}")
    print(f"  {' '.join(cmd[1:])}  ({time.perf_counter() - t0:.1f}s)")


def start_server(args, fixture: Path) -> Server:
    env = os.environ.copy()
    for key in ("HTTPS", "SECURE_SSL_REDIRECT", "STATICFILES_BACKEND", "WHITENOISE_USE_FINDERS", "CONN_MAX_AGE", "LOG_LEVEL"):
        env.pop(key, None)  # production defaults from settings.py, whatever the caller's shell has
    env.update(
        DJANGO_SETTINGS_MODULE="spotlight_study.settings",
        DATABASE_URL=args.database_url,
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
        # Every simulated participant arrives from 127.0.0.1: the arrival rate limit would turn
        # all but the first few away.
        ENTRY_RATE_LIMIT="off",
    )
    recreate_database(args.database_url, args.allow_drop_any, args.force_drop)
    print("setup:")
    py = sys.executable
    _run([py, "manage.py", "migrate", "--noinput"], env)
    _run([py, "manage.py", "collectstatic", "--noinput"], env)
    _run([py, "manage.py", "import_study", str(fixture)], env)

    # Default: sync workers, 2 x CPUs + 1 (gunicorn's rule of thumb). The app is CPU-bound (Django
    # ORM + templates) with short waits for the local PostgreSQL, so a few more processes than
    # CPUs keep both CPUs busy while one worker waits; threads do not help CPU-bound Python (GIL).
    # Measured on the 2-CPU box: 2 sync, 5 sync and the Procfile's 3 x 2 gthread give the same
    # throughput within noise; gthread had the worst tail latency.
    cpus = os.cpu_count() or 1
    workers = args.workers or (2 * cpus + 1)
    threads = args.threads or 1
    worker_class = "gthread" if threads > 1 else "sync"
    port = _free_port()
    log_dir = Path(tempfile.mkdtemp(prefix="spotlight-bench-"))
    log_path = log_dir / "gunicorn.log"
    cmd = [
        py, "-m", "gunicorn", "spotlight_study.wsgi:application",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers),
        "--worker-class", worker_class,
        "--threads", str(threads),
        "--backlog", "2048",
        "--timeout", "60",
        "--error-logfile", "-",
    ]  # fmt: skip
    if not args.no_access_log:
        cmd += ["--access-logfile", "-"]  # as in the Procfile
    config = (
        f"gunicorn {worker_class}, {workers} workers x {threads} threads on 127.0.0.1:{port} "
        f"({cpus} CPUs{'; default 2 x CPUs + 1 sync workers' if not args.workers and not args.threads else ''}), DEBUG=false, access log {'off' if args.no_access_log else 'on'}, "
        f"PostgreSQL {urlsplit(args.database_url).path.lstrip('/')} (CONN_MAX_AGE=60 default)"
    )
    print(f"server: {config}\n  log: {log_path}")
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            sys.exit(f"gunicorn exited with {proc.returncode}; see {log_path}")
        try:
            r = httpx.get(f"{base_url}/s/{args.slug}/", timeout=2, trust_env=False)
            if r.status_code in (200, 302, 400):  # 400: the entry page without Prolific IDs
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            stop_server(Server(proc, base_url, config, log_path))
            sys.exit(f"gunicorn did not answer within 60 s; see {log_path}")
        time.sleep(0.2)
    # Wait until every worker has booted (each logs "Booting worker"), so that boot CPU does not
    # fall into the measurement.
    while time.monotonic() < deadline:
        if log_path.read_text(errors="replace").count("Booting worker") >= workers:
            break
        time.sleep(0.2)
    time.sleep(0.5)
    return Server(proc, base_url, config, log_path)


def stop_server(server: Server) -> None:
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)  # gunicorn master: graceful stop of its workers
        try:
            server.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait(timeout=10)
    print(f"server stopped (exit {server.proc.returncode})")


# --- CPU accounting --------------------------------------------------------------------------


def _machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    try:
        f = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0, 0.0
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


def _procs_cpu(root_pid: int | None) -> dict[str, float]:
    """CPU seconds (user+sys) of live processes: ``gunicorn`` (``root_pid`` and its children),
    ``postgres`` (every process named postgres) and ``self`` (this load generator)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {"gunicorn": 0.0, "postgres": 0.0}
    procs = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2:].split()
        # utime+stime, and cutime+cstime: the CPU of reaped children (exited workers/backends).
        procs[int(d.name)] = (comm, int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14]))
    for pid, (comm, ppid, own, children) in procs.items():
        if root_pid is not None and pid == root_pid:
            out["gunicorn"] += (own + children) / tick
        elif root_pid is not None and ppid == root_pid:
            out["gunicorn"] += own / tick
        elif comm == "postgres":
            parent_is_pg = procs.get(ppid, ("",))[0] == "postgres"
            out["postgres"] += (own + (0 if parent_is_pg else children)) / tick
    out["self"] = time.process_time()
    return out


def machine_idle_check(seconds: float = 1.0) -> float:
    """Fraction of the machine's CPU that was busy over ``seconds`` (before the load)."""
    b0, t0 = _machine_cpu()
    time.sleep(seconds)
    b1, t1 = _machine_cpu()
    return (b1 - b0) / max(1.0, t1 - t0)


def code_version() -> str:
    """The commit under test and how many files differ from it (read-only git calls)."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                               text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha or 'unknown'} + {len(dirty)} uncommitted/untracked paths" if dirty else sha


# --- database checks -------------------------------------------------------------------------


def db_checks(url: str, slug: str, pids: list[str]) -> dict:
    import psycopg

    sys.path.insert(0, str(REPO))
    from spotlight_study.studies.design import build_cells  # pure Python, no Django setup

    out: dict = {}
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT id, conditions, survey FROM studies_study WHERE slug = %s", (slug,)
        ).fetchone()
        if row is None:
            raise RuntimeError(f"no study {slug!r} in the database")
        study_id, conditions, survey = row
        keys = [k for (k,) in conn.execute(
            "SELECT key FROM studies_setting WHERE study_id = %s AND kind = 'main' ORDER BY position",
            (study_id,),
        )]
        n_cells = len(build_cells(keys, list(conditions)))
        out["dup_setting"] = conn.execute(
            """SELECT count(*) FROM (
                 SELECT r.participant_id, r.setting_id FROM participation_taskresponse r
                 JOIN participation_participant p ON p.id = r.participant_id
                 WHERE p.study_id = %s GROUP BY 1, 2 HAVING count(*) > 1) d""",
            (study_id,),
        ).fetchone()[0]
        out["dup_position"] = conn.execute(
            """SELECT count(DISTINCT participant_id) FROM (
                 SELECT r.participant_id, r.position FROM participation_taskresponse r
                 JOIN participation_participant p ON p.id = r.participant_id
                 WHERE p.study_id = %s AND r.answered_at IS NOT NULL
                 GROUP BY 1, 2 HAVING count(*) > 1) d""",
            (study_id,),
        ).fetchone()[0]
        out["status"] = dict(conn.execute(
            "SELECT status, count(*) FROM participation_participant WHERE study_id = %s GROUP BY 1",
            (study_id,),
        ).fetchall())
        out["participants"] = sum(out["status"].values())
        out["completed"] = out["status"].get("completed", 0)
        out["completed_this_run"] = conn.execute(
            """SELECT count(*) FROM participation_participant
               WHERE study_id = %s AND status = 'completed' AND prolific_pid = ANY(%s)""",
            (study_id, pids),
        ).fetchone()[0]
        # Completed participants whose stored answers do not match their plan: training + k tasks
        # answered, and one survey answer per (condition, item) and background item.
        n_cond_items = len(survey.get("condition_items", []))
        n_bg_items = len(survey.get("background_items", []))
        bad = 0
        for plan, answered, n_survey in conn.execute(
            """SELECT p.cell_plan,
                      (SELECT count(*) FROM participation_taskresponse r
                        WHERE r.participant_id = p.id AND r.answered_at IS NOT NULL),
                      (SELECT count(*) FROM participation_surveyanswer s WHERE s.participant_id = p.id)
               FROM participation_participant p WHERE p.study_id = %s AND p.status = 'completed'""",
            (study_id,),
        ):
            n_conditions = len({t["condition"] for t in plan})
            if answered != 1 + len(plan) or n_survey != n_conditions * n_cond_items + n_bg_items:
                bad += 1
        out["completed_incomplete_data"] = bad
        counts = dict.fromkeys(range(n_cells), 0)
        for cell, n in conn.execute(
            "SELECT cell_index, count(*) FROM participation_participant WHERE study_id = %s GROUP BY 1",
            (study_id,),
        ):
            counts[cell] = n
        out["cells"] = counts
        out["spread"] = max(counts.values()) - min(counts.values())
    return out


# --- main ------------------------------------------------------------------------------------


async def run_load(runner: Runner, n: int, concurrency: int, timeout: float) -> tuple[list[FlowResult], float, bool]:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    results: list[FlowResult] = []

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            results.append(await runner.flow(i))

    t0 = time.perf_counter()
    timed_out = False
    tasks = [asyncio.create_task(worker()) for _ in range(min(concurrency, n))]
    try:
        async with asyncio.timeout(timeout):
            await asyncio.gather(*tasks)
    except TimeoutError:
        timed_out = True
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return results, time.perf_counter() - t0, timed_out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400, help="simulated participants (default 400)")
    ap.add_argument("--concurrency", "-c", type=int, default=50, help="participants in flight (default 50)")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--base-url", help="a running server on 127.0.0.1/localhost")
    where.add_argument("--start-server", action="store_true",
                       help="fresh PostgreSQL database + migrate + collectstatic + import + gunicorn")
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL),
                    help=f"for --start-server and the checks afterwards (default {DEFAULT_DATABASE_URL})")
    ap.add_argument("--fixture", type=Path, default=DEFAULT_FIXTURE, help="study file (slug, completion code)")
    ap.add_argument("--slug", help="study slug (default: from the fixture)")
    ap.add_argument("--completion-code", help="expected completion code (default: from the fixture)")
    ap.add_argument("--workers", type=int, help="gunicorn workers (default 2 x CPUs + 1)")
    ap.add_argument("--threads", type=int, help="gunicorn threads per worker (default 1: sync workers)")
    ap.add_argument("--no-access-log", action="store_true", help="run gunicorn without the access log")
    ap.add_argument("--allow-drop-any", action="store_true", help="allow dropping a database without 'bench' in its name")
    ap.add_argument("--force-drop", action="store_true",
                    help="drop the database even while other sessions are connected to it")
    ap.add_argument("--timeout", type=float, default=600, help="limit of the whole load phase in s (default 600)")
    ap.add_argument("--request-timeout", type=float, default=30, help="limit of one request in s (default 30)")
    ap.add_argument("--skip-db-checks", action="store_true")
    args = ap.parse_args()
    if args.n < 1 or args.concurrency < 1:
        ap.error("--n and --concurrency must be >= 1")

    import yaml

    study_file = yaml.safe_load(args.fixture.read_text())
    args.slug = args.slug or study_file["slug"]
    completion_code = args.completion_code or study_file["completion_codes"]["completed"]

    server = None
    if args.start_server:
        server = start_server(args, args.fixture)
        base_url, config = server.base_url, server.config
    else:
        host = urlsplit(args.base_url).hostname
        if host not in LOCAL_HOSTS:
            ap.error(f"--base-url must point at 127.0.0.1/localhost, not {host!r}")
        base_url, config = args.base_url, f"external server at {args.base_url} (configuration unknown)"

    runner = Runner(base_url=base_url, slug=args.slug, completion_code=completion_code,
                    request_timeout=args.request_timeout)
    busy_before = machine_idle_check()
    cpu0_machine = _machine_cpu()
    cpu0 = _procs_cpu(server.proc.pid if server else None)
    try:
        results, wall, timed_out = asyncio.run(run_load(runner, args.n, args.concurrency, args.timeout))
    finally:
        cpu1_machine = _machine_cpu()
        cpu1 = _procs_cpu(server.proc.pid if server else None)
        if server:
            stop_server(server)

    st = runner.stats
    completed = [r for r in results if r.ok]
    failed = [r for r in results if not r.ok]
    not_run = args.n - len(results)
    errors = len(failed) + not_run
    lat = st.latencies_ms
    rate = len(completed) / wall if wall else 0.0
    tick = os.sysconf("SC_CLK_TCK")
    machine_s = (cpu1_machine[0] - cpu0_machine[0]) / tick
    busy = (cpu1_machine[0] - cpu0_machine[0]) / max(1.0, cpu1_machine[1] - cpu0_machine[1])
    used = {k: cpu1[k] - cpu0[k] for k in cpu0}
    other_s = max(0.0, machine_s - sum(used.values()))
    print()
    print("=== spotlight participant-flow load benchmark ===")
    print(f"N={args.n}  concurrency={args.concurrency}  study={args.slug}  base_url={base_url}")
    print(f"server: {config}")
    print(f"code: {code_version()}")
    print(f"wall time: {wall:.2f} s{'  (hit --timeout!)' if timed_out else ''}")
    print(f"completed flows: {len(completed)}/{args.n}  ->  {rate:.1f} completed flows/s")
    print(f"requests: {st.requests}  ({st.requests / wall:.0f} req/s; statuses {dict(sorted(st.statuses.items()))})")
    print(f"latency ms over all requests: p50={pct(lat, 50):.1f}  p95={pct(lat, 95):.1f}  "
          f"p99={pct(lat, 99):.1f}  max={max(lat) if lat else float('nan'):.1f}")
    print("  per request kind:            n    p50    p95    p99    max")
    for kind in sorted(st.by_kind, key=lambda k: -pct(st.by_kind[k], 50)):
        v = st.by_kind[kind]
        print(f"    {kind:<22} {len(v):6d} {pct(v, 50):6.1f} {pct(v, 95):6.1f} {pct(v, 99):6.1f} {max(v):6.1f}")
    print(f"errors: {errors}  (failed flows {len(failed)}, of which exceptions {st.exceptions}; "
          f"flows not finished before --timeout {not_run})")
    for msg, k in Counter(r.error for r in failed).most_common(8):
        print(f"  {k} x {msg}")
    n_done = max(1, len(completed))
    print(f"CPU during the load: machine {busy * 100:.0f}% busy of {os.cpu_count()} CPUs "
          f"({busy_before * 100:.0f}% busy in the second before); CPU seconds: "
          + ", ".join(
              f"{name} {used[key]:.1f} s ({used[key] / n_done * 1000:.0f} ms/flow)"
              for name, key in (("gunicorn", "gunicorn"), ("postgres", "postgres"), ("load generator", "self"))
              if key != "gunicorn" or server
          )
          + f", other processes {other_s:.1f} s")
    if server and completed:
        srv = (used["gunicorn"] + used["postgres"]) / n_done
        allcost = srv + used["self"] / n_done
        ncpu = os.cpu_count() or 1
        print(f"  CPU-bound ceiling on this machine: {ncpu} CPUs / {allcost * 1000:.0f} ms per flow = "
              f"{ncpu / allcost:.1f} flows/s with this load generator beside it; "
              f"{ncpu / srv:.1f} flows/s for gunicorn + PostgreSQL alone")
    if busy_before > 0.25 or other_s > 0.1 * machine_s:
        print("  WARNING: other processes used the CPU during this run; figures are pessimistic.")
    db = None
    if not args.skip_db_checks:
        try:
            db = db_checks(args.database_url, args.slug, [r.pid for r in results])
        except Exception as exc:
            print(f"database checks FAILED to run against {args.database_url}: {type(exc).__name__}: {exc}")
    if db:
        print(f"database ({urlsplit(args.database_url).path.lstrip('/')}, whole study):")
        print(f"  duplicate answers: {db['dup_setting']} participant x setting pairs with > 1 TaskResponse; "
              f"{db['dup_position']} participants with > 1 answer at one position")
        print(f"  participants: {db['participants']}  by status {db['status']}")
        print(f"  completed participants: {db['completed']} (of this run's PIDs: {db['completed_this_run']}); "
              f"completed but with missing/extra answers: {db['completed_incomplete_data']}")
        print(f"  cell counts: {db['cells']}  spread (max-min) = {db['spread']}")

    problems = []
    if errors:
        problems.append(f"{errors} errors")
    if db is None:
        problems.append("no database checks")
    else:
        if db["dup_setting"] or db["dup_position"]:
            problems.append("duplicate answers")
        if db["spread"] > 1:
            problems.append(f"cell spread {db['spread']} > 1")
        if db["completed_this_run"] != len(completed) or db["completed_incomplete_data"]:
            problems.append("database disagrees with the client")
    p99 = pct(lat, 99)
    if not p99 < TARGET_P99_MS:
        problems.append(f"p99 {p99:.0f} ms >= {TARGET_P99_MS:.0f} ms")
    if rate < TARGET_FLOWS_PER_S:
        problems.append(f"{rate:.1f} flows/s < {TARGET_FLOWS_PER_S:.0f}")
    verdict = "PASS" if not problems else "FAIL"
    print(f"{verdict}: target = no errors, no duplicate answers, cell spread <= 1, p99 < {TARGET_P99_MS:.0f} ms, "
          f">= {TARGET_FLOWS_PER_S:.0f} completed flows/s" + (f"  -- missed: {'; '.join(problems)}" if problems else ""))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
