"""The HTTP checks of scripts/deploy_check.sh, against a deployment behind Caddy.

Run by deploy_check.sh with the deployment's URLs, Caddy's local root CA, and in the
environment the webhook secret and the two logins it created. Every request goes over HTTPS and
verifies the certificate against that CA (none is ever skipped). Clients bind to distinct
loopback addresses (127.0.0.2, 127.0.0.3, 127.0.0.4) so that the per-address limits can be told
apart from the proxy's own address (127.0.0.1). Prints one line per check; exits 1 at the
first failure, naming it. No Django here: it talks to the server as the public does.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import secrets
import ssl
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.flow import parse_page, post_data  # noqa: E402

PROLIFIC = "https://app.prolific.com/"


class CheckFailed(Exception):
    """A check did not hold; the message says which and what was seen."""


def expect(condition: bool, what: str, seen: object = "") -> None:
    """Raise CheckFailed(what, seen) unless ``condition``."""
    if not condition:
        raise CheckFailed(f"{what}{f' (seen: {seen})' if seen != '' else ''}")


class Site:
    """The deployment: HTTPS base URL, plain-HTTP URL and Caddy's CA."""

    def __init__(self, https: str, http: str, ca: str):
        self.https, self.http = https.rstrip("/"), http.rstrip("/")
        self.tls = ssl.create_default_context(cafile=ca)

    def client(self, source: str = "127.0.0.1") -> httpx.Client:
        """A client from the loopback address ``source``, verifying against the CA; no redirects
        followed, no proxy from the environment."""
        transport = httpx.HTTPTransport(local_address=source, verify=self.tls)
        return httpx.Client(base_url=self.https, transport=transport, follow_redirects=False,
                            timeout=60, trust_env=False, headers={"Origin": self.https})


def ids() -> dict[str, str]:
    return {"PROLIFIC_PID": secrets.token_hex(12), "STUDY_ID": secrets.token_hex(12), "SESSION_ID": secrets.token_hex(12)}


def cookie_flags(response: httpx.Response, name: str) -> str:
    """The Set-Cookie line of cookie ``name`` (lower case), or ""."""
    for line in response.headers.get_list("set-cookie"):
        if line.startswith(f"{name}="):
            return line.lower()
    return ""


def check_redirect(site: Site, slug: str) -> None:
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=30) as plain:
        response = plain.get(f"{site.http}/s/{slug}/?x=1")
    location = response.headers.get("location", "")
    # Caddy leaves the port out of the redirect when it is its own https_port (443 on a VM).
    target = urlsplit(location)
    expect(response.status_code in (301, 308) and target.scheme == "https" and target.hostname == "127.0.0.1"
           and f"{target.path}?{target.query}" == f"/s/{slug}/?x=1",
           "plain HTTP redirects to the same page over HTTPS", (response.status_code, location))
    print(f"ok  http:// redirects to https:// ({response.status_code} {location})")


def check_health(site: Site) -> None:
    with site.client() as http:
        health = http.get("/healthz")
        ready = http.get("/readyz")
    expect(health.status_code == 200 and health.json() == {"status": "ok"}, "/healthz is 200", health.text)
    checks = ready.json().get("checks", {})
    expect(ready.status_code == 200 and checks == {"database": "ok", "migrations": "ok", "cache": "ok", "broker": "ok"},
           "/readyz is 200 with PostgreSQL, migrations, the Redis cache and the broker ok", ready.text)
    print(f"ok  /healthz and /readyz: {checks}")


def check_headers_and_static(site: Site, slug: str) -> None:
    with site.client("127.0.0.5") as http:
        entry = http.get(f"/s/{slug}/", params=ids())
        expect(entry.status_code == 302, "a new participant's arrival redirects to the step page", entry.status_code)
        # The participant's binding cookie (one per study, participation/binding.py).
        cookies = [line.lower() for line in entry.headers.get_list("set-cookie")]
        expect(bool(cookies) and all("; secure" in c and "; httponly" in c and "samesite=lax" in c for c in cookies),
               "the participant's cookies are Secure, HttpOnly, SameSite=Lax", cookies)
        page = http.get(f"/s/{slug}/step/")
        csrf = cookie_flags(page, "csrftoken")
        expect(csrf == "" or "secure" in csrf, "the CSRF cookie is Secure", csrf)
        hsts = page.headers.get("strict-transport-security", "")
        expect("max-age=31536000" in hsts and "includesubdomains" in hsts.lower(), "HSTS on a page", hsts)
        csp = page.headers.get("content-security-policy", "")
        expect("default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp,
               "the Content-Security-Policy on a page", csp)
        stylesheet = re.search(r'<link rel="stylesheet" href="([^"]+)"', page.text)
        expect(stylesheet is not None, "the step page links its stylesheet")
        css = http.get(stylesheet.group(1))
        expect(css.status_code == 200 and "text/css" in css.headers.get("content-type", ""),
               "Caddy serves the collected stylesheet", (css.status_code, css.headers.get("content-type")))
    print("ok  secure cookies (Secure, HttpOnly), HSTS, CSP; static files from Caddy "
          f"({stylesheet.group(1)}, {css.headers.get('cache-control', 'no Cache-Control')})")


def walk(http: httpx.Client, slug: str, rng: random.Random) -> str:
    """One participant through the whole flow; returns the completion code Prolific gets."""
    entry = http.get(f"/s/{slug}/", params=ids())
    expect(entry.status_code == 302, "arrival redirects", entry.status_code)
    for _ in range(20):
        page = parse_page(http.get(f"/s/{slug}/step/").text)
        response = http.post(f"/s/{slug}/step/", data=post_data(page, rng))
        expect(response.status_code == 302, f"the {page.kind} step accepts its form", response.status_code)
        location = response.headers["location"]
        if location.startswith(PROLIFIC):
            return location.rsplit("cc=", 1)[-1]
    raise CheckFailed("a participant flow did not end at Prolific")


def check_flows(site: Site, slug: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    codes = []
    for _ in range(n):
        with site.client("127.0.0.4") as http:
            codes.append(walk(http, slug, rng))
    expect(len(set(codes)) == 1 and codes[0], "every participant gets the completion code", codes)
    print(f"ok  {n} participant flows completed over HTTPS (completion code {codes[0]})")


def check_webhook(site: Site) -> None:
    secret = os.environ["PROLIFIC_WEBHOOK_SECRET"]
    body = json.dumps({"event_type": "submission.status.change", "resource_id": secrets.token_hex(12),
                       "status": "APPROVED"}).encode()
    stamp = str(int(time.time()))  # Prolific sends UNIX seconds
    sign = base64.b64encode(hmac.new(secret.encode(), stamp.encode() + body, hashlib.sha256).digest()).decode()
    headers = {"Content-Type": "application/json", "X-Prolific-Request-Timestamp": stamp,
               "X-Event-ID": secrets.token_hex(8)}
    with site.client() as http:
        signed = http.post("/prolific/webhook/", content=body, headers={**headers, "X-Prolific-Request-Signature": sign})
        forged = http.post("/prolific/webhook/", content=body,
                           headers={**headers, "X-Prolific-Request-Signature": base64.b64encode(b"x" * 32).decode()})
    expect(signed.status_code == 200 and "event" in signed.json(), "a signed webhook is accepted", signed.text)
    expect(forged.status_code == 401, "a webhook with a wrong signature is refused (401)", forged.status_code)
    print(f"ok  signed webhook 200 ({signed.json().get('outcome')}), forged signature 401")


def login(http: httpx.Client, username: str, password: str, forwarded_for: str | None = None) -> httpx.Response:
    """GET the login form and POST it (with Origin, as a browser does over HTTPS)."""
    form = http.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    expect(form.status_code == 200 and token is not None, "the login page has its form", form.status_code)
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    return http.post("/accounts/login/", headers=headers, data={
        "csrfmiddlewaretoken": token.group(1), "username": username, "password": password})


def check_annotator_login(site: Site) -> None:
    with site.client() as http:
        response = login(http, "check-annotator", os.environ["CHECK_ANNOTATOR_PASSWORD"])
        expect(response.status_code == 302, "the annotator logs in", (response.status_code, response.text[:300]))
        session = cookie_flags(response, "sessionid")
        expect("secure" in session and "httponly" in session, "the login session cookie is Secure, HttpOnly", session)
        home = http.get("/annotate/")
    expect(home.status_code == 200, "the logged-in annotator sees the annotation page", home.status_code)
    print("ok  annotator login (Secure session cookie) and the annotation page")


def check_lockout_counts_the_client(site: Site, limit: int) -> None:
    password = os.environ["CHECK_ANNOTATOR_PASSWORD"]
    with site.client("127.0.0.2") as attacker:
        for i in range(limit):
            # A new spoofed X-Forwarded-For each time: Caddy replaces it with 127.0.0.2.
            login(attacker, "check-annotator", f"wrong-{i}", forwarded_for=f"203.0.113.{i + 1}")
        locked = login(attacker, "check-annotator", password, forwarded_for="203.0.113.200")
    expect(locked.status_code == 429, f"after {limit} failures from 127.0.0.2 (spoofing X-Forwarded-For) "
           "even the right password is refused (429)", locked.status_code)
    with site.client("127.0.0.3") as other:
        allowed = login(other, "check-annotator", password)
    expect(allowed.status_code == 302, "the same account from 127.0.0.3 logs in: the lockout counts the "
           "client's address, not the proxy's", allowed.status_code)
    print(f"ok  login lockout: 127.0.0.2 locked after {limit} failures despite spoofed X-Forwarded-For; 127.0.0.3 not")


def check_rate_limit_counts_the_client(site: Site, slug: str, limit: int) -> None:
    statuses = []
    with site.client("127.0.0.2") as attacker:
        for i in range(limit + 1):
            r = attacker.get(f"/s/{slug}/", params=ids(), headers={"X-Forwarded-For": f"198.51.100.{i + 1}"})
            statuses.append(r.status_code)
    expect(statuses[-1] == 429 and statuses[:limit].count(302) >= limit - 1,
           f"arrival {limit + 1} from 127.0.0.2 (spoofing X-Forwarded-For) gets 429", statuses)
    with site.client("127.0.0.3") as other:
        first = other.get(f"/s/{slug}/", params=ids())
    expect(first.status_code == 302, "an arrival from 127.0.0.3 gets in: the limit counts the client's address, "
           "not the proxy's", first.status_code)
    print(f"ok  arrival rate limit: 127.0.0.2 {statuses}; 127.0.0.3 {first.status_code}")


def check_stimulus_job(site: Site) -> None:
    group1 = "\n".join(f"He treats patient {i} and he smiles at the nurse." for i in range(40))
    group2 = "\n".join(f"She treats patient {i} and she smiles at the nurse." for i in range(40))
    with site.client() as http:
        response = login(http, "check-researcher", os.environ["CHECK_RESEARCHER_PASSWORD"])
        expect(response.status_code == 302, "the researcher logs in", response.status_code)
        form = http.get("/stimuli/import/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        imported = http.post("/stimuli/import/", data={
            "csrfmiddlewaretoken": token, "title": "deploy check", "format": "auto", "column": "text",
            "group1_value": "1", "group2_value": "2"},
            files={"file1": ("group1.txt", group1.encode()), "file2": ("group2.txt", group2.encode())})
        expect(imported.status_code == 302, "the researcher imports two output files", (imported.status_code, imported.text[-500:]))
        set_url = imported.headers["location"]
        page = http.get(set_url)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        started = time.monotonic()
        queued = http.post(f"{set_url.rstrip('/')}/mine/", data={
            "csrfmiddlewaretoken": token, "method": "ctfidf", "pipeline": "", "fisher_p_value": "0.01",
            "clause_max_overlap": "0.05", "min_overlap": "0.3", "top_k": "10"})
        expect(queued.status_code == 302, "a c-TF-IDF mining job is queued", queued.status_code)
        job = re.search(r"/stimuli/jobs/mining/(\d+)/progress\.json", http.get(set_url).text)
        expect(job is not None, "the set's page lists the mining job")
        status = {}
        while time.monotonic() - started < 120:
            status = http.get(f"/stimuli/jobs/mining/{job.group(1)}/progress.json").json()
            if status.get("status") in ("succeeded", "failed"):
                break
            time.sleep(0.5)
    expect(status.get("status") == "succeeded", "the Celery worker runs the mining job to the end", status)
    print(f"ok  stimulus job (c-TF-IDF mining) run by the Celery worker in {time.monotonic() - started:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--https", required=True)
    parser.add_argument("--http", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--slug", required=True)
    parser.add_argument("--flows", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    print(f"deploy check seed {seed} (repeat with --seed {seed})")
    site = Site(args.https, args.http, args.ca)
    entry_limit = int(os.environ.get("ENTRY_RATE_LIMIT", "5/h").split("/")[0])
    lockout_limit = int(os.environ.get("AXES_FAILURE_LIMIT", "3"))
    checks = [
        lambda: check_redirect(site, args.slug),
        lambda: check_health(site),
        lambda: check_headers_and_static(site, args.slug),
        lambda: check_flows(site, args.slug, args.flows, seed),
        lambda: check_webhook(site),
        lambda: check_annotator_login(site),
        lambda: check_lockout_counts_the_client(site, lockout_limit),
        lambda: check_rate_limit_counts_the_client(site, args.slug, entry_limit),
        lambda: check_stimulus_job(site),
    ]
    for check in checks:
        try:
            check()
        except CheckFailed as exc:
            print(f"FAILED  {exc}", file=sys.stderr)
            return 1
        except (httpx.HTTPError, ssl.SSLError, KeyError, ValueError, AttributeError) as exc:
            print(f"FAILED  {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    print(f"all {len(checks)} deployment checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
