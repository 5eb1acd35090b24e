"""Whether a study's base URL is one that participants on Prolific can open (no network used).

The launch check fetches the study URL from this server, so a loopback or private address
passes that fetch while no participant could ever reach it. :func:`address_problems` reads the
address alone: the scheme, and the host as written (a name or an IP literal). It resolves
nothing, so a public name that points to a private address is not caught here.
"""
from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

#: Private networks by RFC 1918 (IPv4) and RFC 4193 unique local addresses (IPv6, fc00::/7).
_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)

_UNREACHABLE = "participants' browsers could not reach it"


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``host`` spells, or ``None`` for a name.

    Besides the dotted quad, browsers accept IPv4 shorthands such as ``127.1`` or ``2130706433``;
    ``socket.inet_aton`` parses those locally (it never looks anything up).
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not host or not all(c.isdigit() or c == "." for c in host):
            return None
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _host_problem(host: str) -> str | None:
    """Why ``host`` (lower case, no brackets) cannot be reached from outside, or ``None``."""
    name = host.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return f"{host} is this computer (loopback): {_UNREACHABLE}"
    if name.endswith(".local"):
        return f"{host} is a local-network (.local) name: {_UNREACHABLE}"
    ip = _ip_literal(name.split("%", 1)[0])
    if ip is None:
        return None
    if ip.is_loopback:
        return f"{host} is a loopback address (this computer): {_UNREACHABLE}"
    if ip.is_link_local:
        return f"{host} is a link-local address: {_UNREACHABLE}"
    if any(ip in network for network in _PRIVATE_NETWORKS if network.version == ip.version):
        return f"{host} is a private network address: {_UNREACHABLE} from the internet"
    if ip.is_unspecified:
        return f"{host} is the unspecified address, not one a browser can open"
    if not ip.is_global:
        return f"{host} is not a public internet address: {_UNREACHABLE}"
    return None


def address_problems(base_url: str) -> list[str]:
    """What makes ``base_url`` unusable as the study's public address, as sentences for people.

    Parameters
    ----------
    base_url : str
        An origin such as ``https://study.example.org`` (a path is allowed and ignored).

    Returns
    -------
    list of str
        Empty for a public ``https`` address. Otherwise one sentence per problem: not an
        http(s) URL or no host; a host that is loopback (``localhost``, ``*.localhost``,
        127.0.0.0/8, ``::1``), a ``.local`` name, link-local (169.254.0.0/16, fe80::/10),
        private (RFC 1918, fc00::/7), unspecified or otherwise not global; plain ``http``
        (Prolific takes only https study URLs). Never raises, never uses the network.
    """
    try:
        parts = urlsplit(base_url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:  # e.g. an unclosed "[" of an IPv6 literal
        return [f"{base_url!r} is not a URL."]
    if parts.scheme not in ("http", "https") or not host:
        return [f"{base_url!r} is not an http(s) address with a host, e.g. https://study.example.org."]
    problems = []
    host_problem = _host_problem(host)
    if host_problem:
        problems.append(host_problem + ".")
    if parts.scheme == "http":
        problems.append(
            "It is plain HTTP: Prolific refuses study URLs that are not https, and browsers "
            "mark the pages as not secure."
        )
    return problems
