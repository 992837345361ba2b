"""The `--redis` URL (server/backends/redis/urls.py): every form read as documented in
docs/operations.md, and every URL that cannot work refused at start-up with a one-line
reason that never repeats the password."""

from __future__ import annotations

import ssl
import subprocess
import sys

import pytest
from redis.asyncio.connection import parse_url

from dicehall.server.backends.redis.urls import RedisUrl, RedisUrlError, Tls, parse_redis_url
from dicehall.server.edge.settings import SettingError
from tests.support.servers import ROOT
from tests.support.tls import Certs


def test_one_redis() -> None:
    assert parse_redis_url("redis://10.0.0.5:6380/3") == RedisUrl(
        url="redis://10.0.0.5:6380/3", host="10.0.0.5", port=6380, db=3
    )
    plain = parse_redis_url("redis://cache")
    assert (plain.host, plain.port, plain.db, plain.auth, plain.tls) == ("cache", 6379, 0, [], None)
    assert parse_redis_url("redis://h/").db == 0
    assert parse_redis_url("redis://h?db=4").db == 4
    v6 = parse_redis_url("redis://[::1]:7000/2")
    assert (v6.host, v6.port, v6.db) == ("::1", 7000, 2)


def test_credentials_are_percent_decoded() -> None:
    both = parse_redis_url("redis://app:p%40ss%3Aw@h/1")
    assert (both.username, both.password, both.auth) == ("app", "p@ss:w", ["app", "p@ss:w"])
    password_only = parse_redis_url("redis://:secret@h")
    assert (password_only.username, password_only.auth) == (None, ["secret"])


def test_a_unix_socket() -> None:
    target = parse_redis_url("unix:///run/redis/redis.sock?db=2")
    assert (target.path, target.db, target.sentinel) == ("/run/redis/redis.sock", 2, False)


def test_sentinel_urls() -> None:
    target = parse_redis_url(
        "redis+sentinel://:pw@s1:26380,s2,[fd00::3]:5000/my%20service/7"
        "?sentinel_username=watch&sentinel_password=w%26"
    )
    assert target.sentinel
    assert target.sentinels == (("s1", 26380), ("s2", 26379), ("fd00::3", 5000))
    assert (target.service, target.db, target.auth) == ("my service", 7, ["pw"])
    assert target.sentinel_auth == ["watch", "w&"]
    assert target.tls is None and target.ssl_context is None
    assert parse_redis_url("redis+sentinel://s1/svc").db == 0
    assert parse_redis_url("redis+sentinel://s1/svc").sentinel_auth == []


def test_tls_defaults_are_redis_pys() -> None:
    """The CA and the name are checked unless the URL says not (redis-py's defaults too)."""
    target = parse_redis_url("rediss://h:6390/1")
    assert target.tls == Tls() and target.tls.cert_reqs == "required"
    context = target.ssl_context
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert parse_url(target.url)["connection_class"].__name__ == "SSLConnection"


def test_tls_parameters_build_the_context_and_redis_pys_arguments(certs: Certs) -> None:
    query = (
        f"ssl_ca_certs={certs.ca}&ssl_certfile={certs.client_cert}"
        f"&ssl_keyfile={certs.client_key}&ssl_cert_reqs=optional&ssl_check_hostname=False"
    )
    target = parse_redis_url(f"rediss://h/0?{query}")
    assert target.tls == Tls(
        ca_certs=str(certs.ca),
        certfile=str(certs.client_cert),
        keyfile=str(certs.client_key),
        cert_reqs="optional",
        check_hostname=False,
    )
    context = target.ssl_context
    assert context is not None
    assert context.verify_mode == ssl.CERT_OPTIONAL and not context.check_hostname
    assert [c["subject"] for c in context.get_ca_certs()][-1] == (
        (("commonName", "dicehall test ca"),),
    )
    # What redis-py's own parser reads from the same URL, for its clients:
    theirs = parse_url(target.url)
    ours = target.tls.redis_kwargs()
    assert ours.pop("ssl") is True
    assert {k: v for k, v in theirs.items() if k.startswith("ssl_")} == ours
    none = parse_redis_url("rediss+sentinel://s/svc?ssl_cert_reqs=none")
    assert none.ssl_context is not None and none.ssl_context.verify_mode == ssl.CERT_NONE
    assert not none.ssl_context.check_hostname  # (no name to check without a certificate)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("", "starts with redis://"),
        ("http://h:6379", "not http://"),
        ("redis://", "names no host"),
        ("redis://h:0", "bad port '0'"),
        ("redis://h:port", "bad port 'port'"),
        ("redis://h/zero", "database (/DB) of the Redis URL is a number, not 'zero'"),
        ("redis://h/1?db=2", "database twice"),
        ("redis://h?db=x", "number, not 'x'"),
        ("redis://h1,h2/0", "several hosts need a Sentinel URL"),
        ("redis://h?socket_timeout=60", "unknown parameter 'socket_timeout'"),
        ("redis://h?ssl_ca_certs=/ca.pem", "TLS setting: the URL must start with rediss://"),
        ("redis://h/0#x", "no #fragment"),
        ("redis://[::1/0", "cannot be read"),
        ("redis://user@h", "a user and no password"),
        ("redis://h?db=1&db=2", "given twice"),
        ("unix://", "names its socket"),
        ("redis+sentinel://s1,s2", "names the service after its hosts"),
        ("redis+sentinel://s1/", "names the service"),
        ("redis+sentinel://s1/svc/0/more", "names the service"),
        ("redis+sentinel://s1/svc/x", "a number, not 'x'"),
        ("redis+sentinel:///svc", "names no host"),
        ("redis+sentinel://s1,,s2/svc", "a host is missing"),
        ("redis+sentinel://s1/svc?sentinel_pw=x", "unknown parameter 'sentinel_pw'"),
        ("redis://h?sentinel_password=x", "unknown parameter 'sentinel_password'"),
        ("rediss://h?ssl_cert_reqs=REQUIRED", "none, optional or required, not 'REQUIRED'"),
        ("rediss://h?ssl_check_hostname=maybe", "true or false, not 'maybe'"),
        ("rediss://h?ssl_ca_certs=/no/such/ca.pem", "ssl_ca_certs=/no/such/ca.pem: No such"),
        ("rediss://h?ssl_keyfile=/k.pem", "ssl_keyfile needs ssl_certfile"),
        ("rediss://h?ssl_certfile=/etc/hostname", "ssl_certfile/ssl_keyfile: not a usable"),
    ],
)
def test_a_url_that_cannot_work_is_refused_saying_why(url: str, says: str) -> None:
    with pytest.raises(RedisUrlError) as caught:
        parse_redis_url(url)
    assert says in str(caught.value)
    assert isinstance(caught.value, SettingError)


def test_a_cluster_takes_one_nodes_url() -> None:
    assert parse_redis_url("rediss://node:7000", cluster=True).port == 7000
    for url in ("redis+sentinel://s/svc", "unix:///s.sock"):
        with pytest.raises(RedisUrlError, match="--redis-cluster takes"):
            parse_redis_url(url, cluster=True)


def test_dicehall_serve_says_what_is_wrong_in_one_line_without_the_password() -> None:
    for args, says in [
        (["--redis", "redis+sentinel://:hunter2@s1:26379"], "names the service"),
        (["--redis", "rediss://:hunter2@h?ssl_ca_certs=/no/ca.pem"], "/no/ca.pem: No such"),
        (["--redis", "redis+sentinel://:hunter2@s1/svc", "--redis-cluster"], "--redis-cluster"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "dicehall.clients.cli", "serve", "--port", "1", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dicehall serve: --redis: "), lines
        assert says in lines[0] and "hunter2" not in lines[0]
