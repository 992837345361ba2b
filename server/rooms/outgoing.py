"""One numbered room message as it leaves the room: the public message, the private
variants (a Qwirkle draw), the live-only variants (a seat's legal actions with its window),
and its frames, encoded once per encoding and view however many members receive it (and
framed for the WebSocket once, by the socket's side: server/connections/outbox.py, `WireCache`). A
message that another process or the room's log encoded comes back with its MessagePack
frame kept (`from_msgpack`).

Below it, how a room keeps its two logs in memory, as bytes (`MessageLog`, `RecordLog`):
the numbered messages (the last `history` of them, for resumes and takeovers) and the game
record's entries (the whole game). As objects they would cost a kilobyte an entry and work
for the garbage collector; as MessagePack, compressed where they are old, a few dozen
bytes."""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Iterator, Mapping
from typing import Protocol

import msgspec
from msgspec.structs import replace as replace_fields

from dicehall.protocol.codec import MSGPACK, Frame, encode
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

from ..jsonvalue import JsonObject


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


# --- the room's logs --------------------------------------------------------------------

LOG_BLOCK = 32
"""Messages the log compresses together: 32 MessagePack frames of a Qwixx room (~85 bytes
each) pack to ~13 bytes a message with zlib level 1 and the game's dictionary (~19 without
one); appending takes ~1.3 µs a message instead of 0.5 (docs/benchmarks/journal.md, "Memory")."""

_SIZE = 4
"""Each frame in a block (and in the tail) follows its length: 4 bytes, little-endian."""

_WINDOW_BITS = -13
"""An 8 KiB window (raw deflate, no header): it spans a block and its dictionary (~4 KiB
each for Qwixx)."""

_MEMORY_LEVEL = 4
"""zlib's default (a 32 KiB window, memory level 8) set up and cleared ~256 KiB for every
block, most of what packing one cost; with the window above and this level the state is
~40 KiB, copied from the primed one (`_Dictionary`), and a block packs to the same size
(docs/benchmarks/journal.md, "Cheaper acts")."""


class _Deflate(Protocol):
    """What the log asks of a `zlib.compressobj`."""

    def compress(self, data: bytes | bytearray, /) -> bytes: ...
    def flush(self) -> bytes: ...
    def copy(self) -> _Deflate: ...


class _Dictionary:
    """A preset deflate dictionary for one kind of log (a game): the first block that any
    log of that kind filled in this process, as it was before compression.

    A room's messages repeat the same keys, event names and values as every other room of
    its game, so the first block of one game primes the compression of all: a block is a
    third smaller. Set once per kind and never changed, so every block of a kind
    decompresses with what it was compressed with; process-local, as the logs are (what
    leaves the process is messages, not blocks). `primed` has read it already: each block
    is compressed by a copy of it, as reading the dictionary anew took 40 % of packing
    a block."""

    __slots__ = ("data", "primed")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.primed: _Deflate = zlib.compressobj(
            1, zlib.DEFLATED, _WINDOW_BITS, _MEMORY_LEVEL, zdict=data
        )


_DICTIONARIES: dict[str, _Dictionary] = {}


def _sized(frames: list[bytes]) -> bytes:
    """`frames` as a block holds them: each after its length."""
    return b"".join(b for f in frames for b in (len(f).to_bytes(_SIZE, "little"), f))


def _split(data: bytes | bytearray) -> list[bytes]:
    """The frames of `_sized` data, back."""
    frames: list[bytes] = []
    at, end = 0, len(data)
    while at < end:
        size = int.from_bytes(data[at : at + _SIZE], "little")
        at += _SIZE
        frames.append(bytes(data[at : at + size]))
        at += size
    return frames


def _pack_block(data: bytes | bytearray, dictionary: _Dictionary) -> bytes:
    """`_sized` frames compressed."""
    deflate = dictionary.primed.copy()
    # (join, not +: mypy 1.20's mypyc leaks the left operand of bytes + bytes, mypyc#1192)
    return b"".join((deflate.compress(data), deflate.flush()))


def _unpack_block(block: bytes, dictionary: _Dictionary) -> list[bytes]:
    return _split(zlib.decompressobj(_WINDOW_BITS, zdict=dictionary.data).decompress(block))


class MessageLog:
    """A room's last `maxlen` messages, each kept as its MessagePack bytes, the older ones
    compressed `LOG_BLOCK` at a time.

    A room sends thousands of messages; as message objects (structs, the engine's event
    maps) each took over a kilobyte and half a dozen objects the garbage collector walks
    again and again. As bytes an entry is ~125 bytes and nothing to walk; compressed in
    blocks of 32, ~20 (docs/benchmarks/journal.md, "Load" and "Memory"). The newest messages (fewer
    than a block) stay as they are, back to back in one buffer (as bytes objects they cost
    ~45 bytes more each). Seqs are consecutive, so only the last is kept; the few private
    variants (a Qwirkle draw) sit beside, by seq. The oldest block may still hold messages
    that aged out: they are skipped, and the block goes when all of its messages have.
    Iterating gives `Outgoing`s back, decoded: only a resume or a takeover reads the log.
    """

    __slots__ = ("_blocks", "_count", "_kind", "_last", "_private", "_tail", "_tailed", "maxlen")

    def __init__(self, maxlen: int, kind: str = "") -> None:
        self.maxlen = maxlen
        self._kind = kind
        """What its messages are (the game's name): the compression dictionary's key."""
        self._blocks: list[bytes] = []
        """(A list, not a deque: at most `maxlen / LOG_BLOCK` of them, and an empty deque
        is 600 bytes a room.)"""
        self._tail = bytearray()
        """The newest messages' public frames, `_sized`: `_tailed` of them."""
        self._tailed = 0
        self._count = 0
        """Messages kept: at most `maxlen` (the blocks and the tail may hold a few more)."""
        self._private: dict[int, dict[int, bytes]] = {}
        self._last = 0

    def append(self, out: Outgoing) -> None:
        if self._count and out.seq != self._last + 1:  # never in practice: start afresh
            self._blocks = []
            self._tail = bytearray()
            self._tailed = 0
            self._private.clear()
            self._count = 0
        public = out.frame(None, MSGPACK)
        assert isinstance(public, bytes)
        tail = self._tail
        tail += len(public).to_bytes(_SIZE, "little")
        tail += public
        self._tailed += 1
        self._last = out.seq
        if out.private:
            self._private[out.seq] = {s: MSGPACK_ENCODER.encode(m) for s, m in out.private.items()}
        if self._count < self.maxlen:
            self._count += 1
        elif self._private:  # one aged out
            first = self._last - self.maxlen + 1
            for seq in [q for q in self._private if q < first]:
                del self._private[seq]
        if self._tailed == LOG_BLOCK:
            dictionary = _DICTIONARIES.get(self._kind)
            if dictionary is None:
                dictionary = _DICTIONARIES[self._kind] = _Dictionary(bytes(tail))
            self._blocks.append(_pack_block(tail, dictionary))
            self._tail = bytearray()
            self._tailed = 0
        while self._blocks and self._stored() - LOG_BLOCK >= self._count:
            del self._blocks[0]  # every message in it aged out

    def _stored(self) -> int:
        return len(self._blocks) * LOG_BLOCK + self._tailed

    def _frames(self, start: int) -> Iterator[bytes]:
        """The public frames of the messages kept, from index `start` on."""
        at = self._stored() - self._count + start
        for i, block in enumerate(self._blocks):
            if at < (i + 1) * LOG_BLOCK:
                frames = _unpack_block(block, _DICTIONARIES[self._kind])
                yield from frames[max(0, at - i * LOG_BLOCK) :]
        yield from _split(self._tail)[max(0, at - len(self._blocks) * LOG_BLOCK) :]

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Outgoing]:
        first = self.first_seq or 0
        for i, public in enumerate(self._frames(0), first):
            yield Outgoing.from_msgpack(public, self._private.get(i))

    @property
    def first_seq(self) -> int | None:
        return self._last - self._count + 1 if self._count else None

    def messages(self, start: int, seat: int | None) -> list[RoomMessage]:
        """The messages from index `start` on, as `seat` sees them."""
        first = self.first_seq or 0
        out: list[RoomMessage] = []
        for i, public in enumerate(self._frames(start), first + start):
            private = self._private.get(i) if seat is not None else None
            data = private.get(seat, public) if private is not None and seat is not None else public
            out.append(ROOM_MESSAGE_DECODER.decode(data))
        return out


_RECORD_ENCODER = msgspec.msgpack.Encoder()
_RECORD_DECODER = msgspec.msgpack.Decoder()


class RecordLog:
    """A game record's log as MessagePack, one entry after the other in one buffer.

    Rooms keep their record for the whole game, and as Python maps its entries cost ~450
    bytes each (40-70 KB per Qwixx game); packed they cost a few dozen, nothing for the
    garbage collector to walk, and a snapshot copies them as one bytes value.
    """

    __slots__ = ("count", "data")

    def __init__(self, data: bytes = b"", count: int = 0) -> None:
        self.data = bytearray(data)
        self.count = count

    def append(self, entry: Mapping[str, object]) -> None:
        self.data += _RECORD_ENCODER.encode(entry)
        self.count += 1

    def entries(self) -> list[JsonObject]:
        # packed entries behind an array header are one MessagePack array
        head = struct.pack(">BI", 0xDD, self.count)
        entries: list[JsonObject] = _RECORD_DECODER.decode(head + self.data)
        return entries

    def __len__(self) -> int:
        return self.count
