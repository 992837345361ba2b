"""One numbered room message as it leaves the room: the public message, the private
variants (a Qwirkle draw), the live-only variants (a seat's legal actions with its window),
and its frames, encoded once per encoding and view however many members receive it (and
framed for the WebSocket once, by the socket's side: server/outbox.py, `WireCache`). A
message that another process or the room's log encoded comes back with its MessagePack
frame kept (`from_msgpack`)."""

from __future__ import annotations

import time

import msgspec
from msgspec.structs import replace as replace_fields

from dicehall.protocol.codec import Frame, encode
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomMessage,
    RoomUpdate,
    Window,
    WindowClosed,
)
from dicehall.protocol.subprotocols import Encoding


class Outgoing:
    """One numbered room message: `message` for everyone, `private[seat]` for that seat,
    and `live[seat]` for that seat's holder as it happens.

    `private` is what the seat may see instead of the public message (hidden information):
    kept in the room's log and replayed. `live` only adds to what is public (the seat's
    legal actions: `legal_in_window`) and goes to the live fan-out alone: not logged, so a
    resume replays the plain message (docs/protocol.md says so), and a room in play does
    not hold a list of actions per seat and window for its resume log.

    Frames are memoised per (variant, encoding, stamped): a message is encoded once per
    encoding and view (and once more with `sent_us` for members with the `timestamps`
    feature), however many members receive it.

    (A plain class, not a dataclass: a dataclass's `__init__` is Python made at import, and
    every room message runs it; this one compiles with the module.)
    """

    __slots__ = ("_frames", "live", "message", "private", "produced", "sent_us")

    def __init__(
        self,
        message: RoomMessage,
        private: dict[int, RoomMessage] | None = None,
        live: dict[int, RoomMessage] | None = None,
    ) -> None:
        self.message = message
        self.private: dict[int, RoomMessage] = {} if private is None else private
        self.live = live
        self.produced = time.monotonic()
        """When the room made it (the fan-out's latency counts from here)."""
        self.sent_us: int | None = None
        """The `timestamps` feature's stamp: set when the first member that asked is served."""
        self._frames: dict[tuple[int | None, Encoding, bool], Frame] = {}

    def __repr__(self) -> str:
        return f"Outgoing({self.message!r}, private={self.private!r}, live={self.live!r})"

    @property
    def seq(self) -> int:
        return self.message.seq

    def for_seat(self, seat: int | None) -> RoomMessage:
        if seat is not None:
            live = self.live
            if live is not None and seat in live:
                return live[seat]
            if seat in self.private:
                return self.private[seat]
        return self.message

    @classmethod
    def from_msgpack(
        cls,
        public: bytes,
        private: dict[int, bytes] | None = None,
        live: dict[int, bytes] | None = None,
    ) -> Outgoing:
        """A message as another process or the log encoded it: its MessagePack frame is
        kept for the members who take that encoding, so they get it without an encode."""
        out = cls(
            ROOM_MESSAGE_DECODER.decode(public),
            {s: ROOM_MESSAGE_DECODER.decode(b) for s, b in private.items()} if private else {},
            {s: ROOM_MESSAGE_DECODER.decode(b) for s, b in live.items()} if live else None,
        )
        out._frames[(None, Encoding.MSGPACK, False)] = public
        for seat, frame in [*(private or {}).items(), *(live or {}).items()]:
            out._frames[(seat, Encoding.MSGPACK, False)] = frame
        return out

    def frame(self, seat: int | None, encoding: Encoding, stamped: bool = False) -> Frame:
        """The frame for `seat`; `stamped` adds `sent_us` (the `timestamps` feature).

        One stamp per message, taken at its fan-out, shared by every member that asked:
        still one encoding per (view, encoding, stamped), whatever the number of members.
        """
        return self._frame((self.variant(seat), encoding, stamped))

    def variant_frame(self, variant: int | None, encoding: Encoding, stamped: bool) -> Frame:
        """`frame` for a `variant` already found (`variant(seat)`)."""
        return self._frame((variant, encoding, stamped))

    def _frame(self, key: tuple[int | None, Encoding, bool]) -> Frame:
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = self._encode(key)
        return frame

    def variant(self, seat: int | None) -> int | None:
        """The seat whose own message `seat` gets, or None: the public one (the frames of a
        message differ by this, not by the seat)."""
        if seat is not None and (seat in self.private or (self.live and seat in self.live)):
            return seat
        return None

    def _encode(self, key: tuple[int | None, Encoding, bool]) -> Frame:
        variant, encoding, stamped = key
        message = self.for_seat(variant)
        if stamped and hasattr(message, "sent_us"):
            if self.sent_us is None:
                self.sent_us = time.time_ns() // 1000
            message = replace_fields(message, sent_us=self.sent_us)  # (one lookup, not two)
        return encode(message, encoding)


ROOM_MESSAGE_DECODER = msgspec.msgpack.Decoder(
    RoomUpdate | Event | Window | WindowClosed | GameOver | Chat | Progress
)
MSGPACK_ENCODER = msgspec.msgpack.Encoder()
