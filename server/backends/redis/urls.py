"""The `--redis` URL, read once: where Redis is, who we are to it, and how TLS is set up.

Forms (docs/operations.md, "Redis URLs"):

    redis://[[user]:password@]host[:6379][/DB]          one Redis (`rediss://`: TLS)
    unix://[[user]:password@]/path/to/socket[?db=DB]     one Redis on a Unix socket
    redis+sentinel://[[user]:password@]host[:26379][,host[:26379]...]/SERVICE[/DB]
                                                         the primary that Sentinel names
                                                         (`rediss+sentinel://`: TLS to it)

TLS is set with redis-py's query parameters (`ssl_ca_certs`, `ssl_certfile`, `ssl_keyfile`,
`ssl_cert_reqs`, `ssl_check_hostname`), which redis-py's own `parse_url` applies to its
clients; `ssl_context` builds the same context for our RESP connections, so every path to
Redis checks the same certificates. A Sentinel URL's credentials are the data nodes'; the
sentinels take `sentinel_username` / `sentinel_password` when they want any.

Why a parser of our own: redis-py ignores what it does not understand (a database that is
not a number, a parameter with a typo) or fails only at the first connection, and knows
nothing of several hosts. Here a URL that cannot work stops `dicehall serve` at start-up
with a one-line reason that never repeats a password. Other query parameters are refused:
redis-py would let one (`socket_timeout`) override the deadlines every path keeps.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import TypedDict
from urllib.parse import parse_qsl, unquote, urlsplit

from ...edge.settings import SettingError

SENTINEL_PORT = 26379
REDIS_PORT = 6379

CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
"""`ssl_cert_reqs`, spelt as redis-py spells it (it looks the value up as given)."""
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")
"""`ssl_check_hostname`: only spellings redis-py reads the same way (its `to_bool`)."""

TLS_PARAMETERS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs")
TLS_FLAGS = ("ssl_check_hostname",)
SENTINEL_PARAMETERS = ("sentinel_username", "sentinel_password")


class RedisUrlError(SettingError):
    """A `--redis` URL that cannot work; the message names the part at fault."""


class SslKwargs(TypedDict, total=False):
    """redis-py's TLS connection arguments (`Tls.redis_kwargs`)."""

    ssl: bool
    ssl_cert_reqs: str
    ssl_check_hostname: bool
    ssl_ca_certs: str
    ssl_certfile: str
    ssl_keyfile: str


@dataclass(frozen=True)
class Tls:
    """TLS to the data nodes, as redis-py's `SSLConnection` sets it up: the system's CAs
    plus `ca_certs`, a client certificate if given, the peer's certificate required and
    its name checked unless the URL says otherwise."""

    ca_certs: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    cert_reqs: str = "required"
    check_hostname: bool = True

    def context(self) -> ssl.SSLContext:
        """Raises `RedisUrlError` when a file cannot be read or is not what it should be."""
        verify = CERT_REQS[self.cert_reqs]
        context = ssl.create_default_context()
        context.check_hostname = self.check_hostname and verify != ssl.CERT_NONE
        context.verify_mode = verify
        files = (("ssl_ca_certs", self.ca_certs), ("ssl_certfile", self.certfile))
        for name, path in (*files, ("ssl_keyfile", self.keyfile)):
            if path is not None:
                try:
                    with open(path, "rb"):
                        pass
                except OSError as exc:
                    raise RedisUrlError(f"{name}={path}: {exc.strerror or exc}") from None
        try:
            if self.certfile is not None:
                what = "ssl_certfile/ssl_keyfile"
                context.load_cert_chain(certfile=self.certfile, keyfile=self.keyfile)
            if self.ca_certs is not None:
                what = "ssl_ca_certs"
                context.load_verify_locations(cafile=self.ca_certs)
        except ssl.SSLError as exc:
            raise RedisUrlError(f"{what}: not a usable certificate or key ({exc})") from None
        return context

    def redis_kwargs(self) -> SslKwargs:
        """The same settings as redis-py connection arguments (for a Sentinel's primary)."""
        kwargs: SslKwargs = {
            "ssl": True,
            "ssl_cert_reqs": self.cert_reqs,
            "ssl_check_hostname": self.check_hostname,
        }
        if self.ca_certs is not None:
            kwargs["ssl_ca_certs"] = self.ca_certs
        if self.certfile is not None:
            kwargs["ssl_certfile"] = self.certfile
        if self.keyfile is not None:
            kwargs["ssl_keyfile"] = self.keyfile
        return kwargs


@dataclass(frozen=True)
class RedisUrl:
    """A parsed `--redis` URL. `url` is the text as given (redis-py reads a plain one
    itself); `sentinels` is empty unless Sentinel names the primary."""

    url: str
    host: str = "localhost"
    port: int = REDIS_PORT
    path: str | None = None
    """A Unix socket instead of host and port."""
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: Tls | None = None
    sentinels: tuple[tuple[str, int], ...] = ()
    service: str | None = None
    """The name the sentinels monitor the primary under."""
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)
    """Built (and its files read) once, when the URL is parsed."""

    @property
    def sentinel(self) -> bool:
        return bool(self.sentinels)

    @property
    def auth(self) -> list[str]:
        """AUTH's arguments for a data node ([] when it needs none)."""
        return _auth(self.username, self.password)

    @property
    def sentinel_auth(self) -> list[str]:
        """AUTH's arguments for a sentinel ([] when it needs none)."""
        return _auth(self.sentinel_username, self.sentinel_password)


class _Fields(TypedDict, total=False):
    """`RedisUrl`'s arguments, as the parser finds them."""

    url: str
    host: str
    port: int
    path: str | None
    db: int
    username: str | None
    password: str | None
    tls: Tls | None
    sentinels: tuple[tuple[str, int], ...]
    service: str | None
    sentinel_username: str | None
    sentinel_password: str | None
    ssl_context: ssl.SSLContext | None


def _auth(username: str | None, password: str | None) -> list[str]:
    if password is None:
        return []
    return [username, password] if username else [password]


def parse_redis_url(url: str, cluster: bool = False) -> RedisUrl:
    """Read a `--redis` URL (with `cluster`, one node's of a Redis Cluster); raise
    `RedisUrlError` saying what is wrong with it."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # (an unbalanced [v6] bracket)
        raise RedisUrlError(f"the Redis URL cannot be read: {exc}") from None
    scheme = parts.scheme.lower()
    schemes = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
    if scheme not in schemes:
        raise RedisUrlError(
            f"a Redis URL starts with {', '.join(s + '://' for s in schemes)}"
            f" (not {parts.scheme + '://' if parts.scheme else 'no scheme'})"
        )
    if cluster and scheme not in ("redis", "rediss"):
        raise RedisUrlError(
            "--redis-cluster takes the redis:// or rediss:// URL of one node of the cluster"
        )
    if parts.fragment:
        raise RedisUrlError("a Redis URL has no #fragment")
    query = _query(parts.query)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, password = _userinfo(userinfo)
    db = _db(query.pop("db", None), "?db=") if "db" in query else None
    sentinel = scheme.endswith("+sentinel")
    fields: _Fields = {"url": url, "username": username, "password": password}
    if scheme == "unix":
        if not parts.path:
            raise RedisUrlError("a unix:// Redis URL names its socket: unix:///path/to/socket")
        fields["path"] = unquote(parts.path)
    elif sentinel:
        fields["sentinels"] = tuple(_addresses(hosts, SENTINEL_PORT))
        segments = [unquote(s) for s in parts.path.split("/")[1:]]
        if not segments or not segments[0] or len(segments) > 2:
            raise RedisUrlError(
                "a Sentinel URL names the service after its hosts:"
                " redis+sentinel://host:26379[,host:26379...]/SERVICE[/DB]"
            )
        fields["service"] = segments[0]
        if len(segments) == 2:
            db = _path_db(segments[1], db)
        fields["sentinel_username"] = query.pop("sentinel_username", None)
        fields["sentinel_password"] = query.pop("sentinel_password", None)
    else:
        [(fields["host"], fields["port"])] = _addresses(hosts, REDIS_PORT, many=False)
        if parts.path not in ("", "/"):
            db = _path_db(unquote(parts.path[1:]), db)
    fields["db"] = db or 0
    tls = _tls(query, scheme.startswith("rediss"))
    if query:
        known = ["db", *TLS_PARAMETERS, *TLS_FLAGS, *(SENTINEL_PARAMETERS if sentinel else ())]
        raise RedisUrlError(
            f"unknown parameter {next(iter(query))!r} in the Redis URL"
            f" (it takes {', '.join(known)})"
        )
    if tls is not None:
        fields["tls"] = tls
        fields["ssl_context"] = tls.context()
    return RedisUrl(**fields)


def _query(text: str) -> dict[str, str]:
    query: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True, strict_parsing=False):
        if name in query:
            raise RedisUrlError(f"the parameter {name!r} is given twice in the Redis URL")
        query[name] = value
    return query


def _userinfo(userinfo: str) -> tuple[str | None, str | None]:
    if not userinfo:
        return None, None
    user, colon, password = userinfo.partition(":")
    if not colon:  # redis-py reads `name@host` as a user without a password: say so
        raise RedisUrlError(
            "the Redis URL has a user and no password: write [[user]:password@] (user:pw@, :pw@)"
        )
    return unquote(user) or None, unquote(password) or None


def _addresses(text: str, default_port: int, many: bool = True) -> list[tuple[str, int]]:
    """`host[:port]` (`[v6]:port` too), comma-separated where `many`."""
    if not text:
        raise RedisUrlError("the Redis URL names no host")
    items = text.split(",")
    if len(items) > 1 and not many:
        raise RedisUrlError(
            "several hosts need a Sentinel URL (redis+sentinel://h1,h2/SERVICE);"
            " a cluster takes one node's URL and --redis-cluster"
        )
    out = []
    for item in items:
        if item.startswith("["):
            host, bracket, rest = item[1:].partition("]")
            if not bracket or (rest and not rest.startswith(":")):
                raise RedisUrlError(f"bad host {item!r} in the Redis URL")
            port_text = rest[1:]
        else:
            host, _, port_text = item.partition(":")
        if not host:
            raise RedisUrlError(f"a host is missing in the Redis URL (in {text!r})")
        port = default_port
        if port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise RedisUrlError(f"bad port {port_text!r} in the Redis URL")
            port = int(port_text)
        out.append((unquote(host), port))
    return out


def _db(text: str | None, where: str) -> int:
    if text is None or not text.isdigit():
        raise RedisUrlError(f"the database ({where}) of the Redis URL is a number, not {text!r}")
    return int(text)


def _path_db(text: str, query_db: int | None) -> int:
    if query_db is not None:
        raise RedisUrlError("the Redis URL gives its database twice (in its path and ?db=)")
    return _db(text, "/DB")


def _tls(query: dict[str, str], wanted: bool) -> Tls | None:
    given = {name: query.pop(name) for name in (*TLS_PARAMETERS, *TLS_FLAGS) if name in query}
    if not wanted:
        if given:
            raise RedisUrlError(
                f"{next(iter(given))} is a TLS setting: the URL must start with rediss://"
                " (or rediss+sentinel://)"
            )
        return None
    check_hostname = True
    if "ssl_check_hostname" in given:
        flag = given.pop("ssl_check_hostname").lower()
        if flag not in _TRUE + _FALSE:
            raise RedisUrlError(f"ssl_check_hostname is true or false, not {flag!r}")
        check_hostname = flag in _TRUE
    cert_reqs = given.pop("ssl_cert_reqs", "required")
    if cert_reqs not in CERT_REQS:
        raise RedisUrlError(f"ssl_cert_reqs is none, optional or required, not {cert_reqs!r}")
    files = {name.removeprefix("ssl_"): value or None for name, value in given.items()}
    if files.get("keyfile") and not files.get("certfile"):
        raise RedisUrlError("ssl_keyfile needs ssl_certfile (the client certificate)")
    return Tls(cert_reqs=cert_reqs, check_hostname=check_hostname, **files)
