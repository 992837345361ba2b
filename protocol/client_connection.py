"""The client's side of one connection, sans I/O: ids out, replies matched, seqs tracked.

The Python client library drives it over a real socket; tests drive it directly. It
numbers requests, turns each reply into a typed `Response` for the request it answers,
skips message types a newer server may add, drops room messages already seen (after a
resume) and reports a gap instead of delivering past it. A `snapshot` always replaces what
the connection knew of its room, its last seq included, even a higher one: a failover
may take a room back to an earlier seq (docs/protocol.md, "Epochs"), and the messages that
follow the snapshot continue from its seq.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

from .codec import Frame, ServerMessageDecoder, encode
from .errors import InvalidMessageError, ProtocolError, UnknownTypeError, from_body
from .limits import ReaderLimits
from .messages.client import Request
from .messages.results import RESULTS, Result
from .messages.server import Progress, Reply, RoomMessage, ServerMessage, Snapshot, Welcome
from .subprotocols import Encoding


@dataclass(frozen=True, slots=True)
class Response:
    """The reply to `request`: a typed `result` when ok, else the server's `error`."""

    request: Request
    result: Result | None
    error: ProtocolError | None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class Gap:
    """Room messages after `last_seq` were missed; send `resume(room, last_seq)`.

    Later messages of the room are held back (dropped) until the resumed ones arrive.
    """

    room: str
    last_seq: int
    seq: int


Incoming = ServerMessage | Response | Gap


class ClientConnection:
    def __init__(
        self,
        encoding: Encoding,
        limits: ReaderLimits | None = None,
        *,
        first_id: int = 0,
        last_seqs: Mapping[str, int] | None = None,
    ) -> None:
        """`last_seqs`: what an earlier connection saw, so a reconnect resumes from there."""
        self.encoding = encoding
        self._decoder = ServerMessageDecoder(encoding, limits)
        self._next_id = first_id
        self._pending: dict[int, Request] = {}
        self._seqs: dict[str, int] = dict(last_seqs or {})
        self._gapped: set[str] = set()
        self._received: set[str] = set()
        """Rooms this connection delivered a message of."""
        self.welcome: Welcome | None = None
        self.skipped = 0
        """Messages of types this version does not know, skipped."""

    @property
    def pending(self) -> dict[int, Request]:
        return dict(self._pending)

    @property
    def last_seqs(self) -> dict[str, int]:
        return dict(self._seqs)

    def last_seq(self, room: str) -> int | None:
        """The last room message delivered for `room`: what `resume` sends."""
        return self._seqs.get(room)

    def adopt(self, last_seqs: Mapping[str, int]) -> None:
        """Go on where another connection of the same client left its rooms (a client
        moving to a room's own server): what arrives at or below these seqs is a repeat.
        They replace the seqs this one was made with (a snapshot since may have taken a room
        back), not those of messages it received itself."""
        for room, seq in last_seqs.items():
            mine = self._seqs.get(room) if room in self._received else None
            self._seqs[room] = seq if mine is None else max(seq, mine)

    def forget(self, room: str) -> None:
        """Stop tracking a room (after leaving it)."""
        self._seqs.pop(room, None)
        self._gapped.discard(room)
        self._received.discard(room)

    def request(self, message: Request) -> tuple[Request, Frame]:
        """Number `message` (its `id` is replaced) and encode it."""
        numbered = msgspec.structs.replace(message, id=self._next_id)
        self._next_id += 1
        self._pending[numbered.id] = numbered
        return numbered, encode(numbered, self.encoding)

    def receive(self, data: Frame) -> list[Incoming]:
        """What one frame from the server delivers; raises `ProtocolError` on a bad frame."""
        try:
            message = self._decoder.decode(data)
        except UnknownTypeError:
            self.skipped += 1
            return []
        if isinstance(message, Reply):
            return [self._response(message)]
        if isinstance(message, Welcome):
            self.welcome = message
        elif isinstance(message, RoomMessage):
            return self._sequenced(message)
        return [message]

    def _response(self, reply: Reply) -> Response:
        request = self._pending.pop(reply.id, None)
        if request is None:
            raise InvalidMessageError(f"reply to unknown request id {reply.id}")
        if not reply.ok:
            if reply.error is None:
                raise InvalidMessageError(f"error reply {reply.id} without an error")
            return Response(request, None, from_body(reply.error))
        try:
            result = msgspec.convert(reply.result or {}, RESULTS[type(request)])
        except msgspec.ValidationError as exc:
            raise InvalidMessageError(f"result of {reply.id}: {exc}") from None
        return Response(request, result, None)

    def _sequenced(self, message: RoomMessage) -> list[Incoming]:
        room, seq = message.room, message.seq
        last = self._seqs.get(room)
        if isinstance(message, Progress):  # a hint as of `seq`: stale once more followed
            return [message] if seq == last else []
        # a snapshot is taken whatever its seq: a lower one says the room went back (the
        # messages after it never happened), and the next ones continue from it
        if not isinstance(message, Snapshot) and last is not None and seq != last + 1:
            if seq <= last or room in self._gapped:
                return []
            self._gapped.add(room)
            return [Gap(room, last, seq)]
        self._seqs[room] = seq
        self._gapped.discard(room)
        self._received.add(room)
        return [message]
