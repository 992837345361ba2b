"""What crosses Redis, as MessagePack: room messages, forwarded commands and their answers.

Room messages cross as the frames the local fan-out encodes anyway (`Packed`), so the
process that receives them sends the same bytes on without encoding them again.
"""

from __future__ import annotations

from typing import TypedDict

import msgspec

from dicehall.protocol.subprotocols import Encoding

from ...rooms.outgoing import Outgoing

ENCODER = msgspec.msgpack.Encoder()
DECODER = msgspec.msgpack.Decoder()


class Packed(msgspec.Struct, omit_defaults=True):
    """A room message in the stream and on the event channel: its MessagePack frame as the
    fan-out sends it (`m`), the private variants by seat (`p`), and on the event channel
    only the live ones (`l`: Outgoing.live), embedded as they are."""

    m: msgspec.Raw
    p: dict[str, msgspec.Raw] = {}
    live: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict, name="l")


class Events(msgspec.Struct):
    """One commit's messages on a room's event channel, and who committed them; or, not
    committed, who has answered the open window (`progress`: a `Progress` frame)."""

    sender: str = msgspec.field(name="from")
    out: list[Packed] = []
    progress: msgspec.Raw = msgspec.Raw(b"")
    """(msgspec reads no `Raw | None`: empty when absent)"""
    epoch: int = msgspec.field(default=0, name="e")
    """The room's epoch (absent: 0): a process whose members saw an earlier one resyncs
    them (docs/protocol.md, "Epochs")."""


class Forwarded(msgspec.Struct):
    """A command forwarded to the room's owner; `cmd` stays encoded until it is served."""

    sender: str = msgspec.field(name="from")
    rid: int
    cmd: msgspec.Raw


class AnswerError(TypedDict, total=False):
    """A forwarded command's error, as the owner answers it (a `ProtocolError`)."""

    code: int
    message: str
    rule: str | None


class Answer(msgspec.Struct, omit_defaults=True):
    """The owner's answer to a forwarded command: a result, `retry`, or an error."""

    rid: int
    ok: bool
    result: msgspec.Raw = msgspec.Raw(b"\xc0")
    retry: bool = False
    error: AnswerError | None = None


PACKED = msgspec.msgpack.Decoder(Packed)
EVENTS = msgspec.msgpack.Decoder(Events)
FORWARDED = msgspec.msgpack.Decoder(Forwarded)
ANSWER = msgspec.msgpack.Decoder(Answer)


def _frame(out: Outgoing, seat: int | None) -> msgspec.Raw:
    return msgspec.Raw(out.frame(seat, Encoding.MSGPACK))


def pack_outgoing(out: Outgoing, live: bool = False) -> bytes:
    """The frames the local fan-out encodes anyway, reused: no second encoding. `live`:
    with the live-only variants (for the event channel, never for the stream)."""
    private = {str(s): _frame(out, s) for s in out.private}
    variants = {str(s): _frame(out, s) for s in out.live} if live and out.live else {}
    return ENCODER.encode(Packed(_frame(out, None), private, variants))


def unpack_outgoing(data: bytes | Packed) -> Outgoing:
    packed = PACKED.decode(data) if isinstance(data, bytes) else data
    private = {int(s): bytes(raw) for s, raw in packed.p.items()}
    live = {int(s): bytes(raw) for s, raw in packed.live.items()}
    return Outgoing.from_msgpack(bytes(packed.m), private, live)


def events_prefix(proc: str) -> bytes:
    """How process `proc`'s event messages go on after their one-byte map header (msgspec
    keeps a map's order): a process can tell its own on a channel without decoding them."""
    return ENCODER.encode({"from": proc})[1:]


def pack_events(proc: str, entries: list[bytes], epoch: int = 0) -> bytes:
    events: dict[str, object] = {"from": proc, "out": [msgspec.Raw(e) for e in entries]}
    if epoch:
        events["e"] = epoch
    return ENCODER.encode(events)


def pack_progress(proc: str, progress: Outgoing) -> bytes:
    return ENCODER.encode({"from": proc, "progress": _frame(progress, None)})
