"""What the Python client raises for failures on its side of the connection (the
server's own errors are the catalogue's, `dicehall.protocol.errors`)."""

from __future__ import annotations


class ClientError(Exception):
    """A failure on the client's side of the connection (the server's errors are
    `dicehall.protocol.errors.ProtocolError`s)."""


class ConnectError(ClientError):
    """No URL could be connected to (at `connect()`, or a reconnect gave up)."""


class ConnectionLost(ClientError):
    """The socket dropped while this request was in flight: it may or may not have been
    applied. The client reconnects by itself; look at the room's messages (or ask `legal`)
    before deciding again."""


class Unsent(ConnectionLost):
    """The wire was already down when this request was to be written: it never left, so
    `request` sends it again on the next wire instead of raising."""


class RequestTimeout(ClientError):
    """No reply within the request's time-out."""


class ClientClosed(ClientError):
    """The client is closed: by `close()`, or by the server with a code after which a
    reconnect would not help (`code`, `reason`)."""

    def __init__(self, message: str, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


def describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectError):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
