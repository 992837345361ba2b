"""protocol/wsframes.py: the server's frame reader and writer, without a socket."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from dicehall.protocol.wsframes import FrameReader, frames, pack_header
from tests.support.frames import client_frame

TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA


class Sink:
    def __init__(self, max_size: int | None = 1000) -> None:
        self.delivered: list[bytes | str] = []
        self.forwarded = bytearray()
        self.controls: list[tuple[int, bytes]] = []
        self.reader = FrameReader(
            self.delivered.append,
            self.forwarded.extend,
            max_size,
            lambda opcode, payload: self.controls.append((opcode, payload)),
        )

    def feed(self, data: bytes, step: int | None = None) -> None:
        step = step or len(data) or 1
        for i in range(0, len(data), step):
            self.reader.feed(data[i : i + step])


def test_server_frames_have_the_three_header_sizes() -> None:
    assert pack_header(0x81, 5) == b"\x81\x05"
    assert pack_header(0x82, 126) == b"\x82\x7e\x00\x7e"
    assert pack_header(0x82, 65536) == b"\x82\x7f" + struct.pack("!Q", 65536)
    assert frames([b"ab", b"c"], binary=False) == b"\x81\x02ab\x81\x01c"


def test_simple_frames_are_delivered_in_order_however_the_bytes_are_cut() -> None:
    stream = (
        client_frame(TEXT, b'{"a": 1}')
        + client_frame(BINARY, b"\x00\xff" * 100)  # a 16-bit length
        + client_frame(TEXT, "é".encode() * 40_000)  # a 64-bit length
    )
    for step in (1, 2, 3, 7, 64, None):
        sink = Sink(max_size=None)
        sink.feed(stream, step)
        assert sink.delivered == ['{"a": 1}', b"\x00\xff" * 100, "é" * 40_000]
        assert not sink.forwarded


def test_pings_and_pongs_are_read_here_and_a_close_is_forwarded_whole() -> None:
    close = client_frame(CLOSE, b"\x03\xe8")
    stream = (
        client_frame(TEXT, b"1")
        + client_frame(PING, b"are you there")
        + client_frame(PONG, b"here")
        + close
        + client_frame(TEXT, b"2")
    )
    for step in (1, 5, None):
        sink = Sink()
        sink.feed(stream, step=step)
        assert sink.delivered == ["1", "2"]
        assert sink.controls == [(PING, b"are you there"), (PONG, b"here")]
        assert bytes(sink.forwarded) == close


def test_control_frames_that_break_a_rule_go_to_the_other_parser() -> None:
    cases = [
        client_frame(PING, b"x" * 126),  # over 125 bytes
        client_frame(PING, b"part", fin=False),  # a fragmented control frame
        client_frame(PONG, b"", masked=False),
        client_frame(PING, b"", rsv=2),
    ]
    for frame in cases:
        sink = Sink()
        sink.feed(frame)
        assert bytes(sink.forwarded) == frame and not sink.controls


def test_a_fragmented_message_is_forwarded_up_to_its_last_fragment() -> None:
    parts = [
        client_frame(TEXT, b"hel", fin=False),
        client_frame(PING, b"mid"),
        client_frame(CONT, b"l", fin=False),
        client_frame(CONT, b"o"),
    ]
    sink = Sink()
    sink.feed(b"".join(parts) + client_frame(TEXT, b"after"))
    assert bytes(sink.forwarded) == parts[0] + parts[2] + parts[3]
    assert sink.controls == [(PING, b"mid")]
    assert sink.delivered == ["after"]


def test_a_whole_frame_inside_a_fragmented_message_is_the_other_parsers_to_refuse() -> None:
    opened = client_frame(TEXT, b"hel", fin=False)
    intruder = client_frame(TEXT, b"whole")  # RFC 6455 5.4: a continuation was due
    sink = Sink()
    sink.feed(opened + intruder)
    assert bytes(sink.forwarded) == opened + intruder and not sink.delivered


def test_frames_that_break_a_rule_go_to_the_other_parser() -> None:
    cases = [
        client_frame(TEXT, b"{}", masked=False),
        client_frame(TEXT, b"{}", rsv=4),
        client_frame(3, b""),  # a reserved opcode
        client_frame(CONT, b"{}"),  # a continuation with nothing to continue
    ]
    for frame in cases:
        sink = Sink()
        sink.feed(frame)
        assert bytes(sink.forwarded) == frame and not sink.delivered


def test_a_text_frame_that_is_not_utf8_is_delivered_for_the_protocol_to_refuse() -> None:
    sink = Sink()
    sink.feed(client_frame(TEXT, b'{"type": "\xff"}') + client_frame(TEXT, b"ok"))
    assert sink.delivered == ['{"type": "\udcff"}', "ok"] and not sink.forwarded


def test_an_oversized_frame_is_forwarded_as_it_comes_not_buffered() -> None:
    big = client_frame(BINARY, bytes(5000))
    sink = Sink(max_size=1000)
    sink.feed(big[:100])
    assert bytes(sink.forwarded) == big[:100], "the header goes on at once"
    sink.feed(big[100:] + client_frame(TEXT, b"next"))
    assert bytes(sink.forwarded) == big and sink.delivered == ["next"]


def test_once_stopped_data_frames_are_forwarded_and_pings_still_read_here() -> None:
    sink = Sink()
    text, binary = client_frame(TEXT, b"abcdef"), client_frame(BINARY, b"b")
    sink.feed(text[:4])
    sink.reader.stop()
    sink.feed(text[4:] + client_frame(PING, b"p") + binary)
    assert bytes(sink.forwarded) == text + binary
    assert not sink.delivered and sink.controls == [(PING, b"p")]


def test_a_stop_while_forwarding_forwards_the_rest_of_the_same_read() -> None:
    close = client_frame(CLOSE, b"\x03\xe8")
    after = client_frame(TEXT, b"late")
    forwarded = bytearray()
    delivered: list[bytes | str] = []

    def forward(data: bytes) -> None:
        forwarded.extend(data)
        reader.stop()  # as the protocol does once the connection is closing

    reader = FrameReader(delivered.append, forward, 1000, lambda opcode, payload: None)
    reader.feed(client_frame(TEXT, b"first") + close + after)
    assert delivered == ["first"]
    assert bytes(forwarded) == close + after


frame_specs = st.lists(
    st.tuples(
        st.sampled_from(["text", "binary", "ping", "fragmented", "unmasked"]),
        st.binary(max_size=300),
    ),
    max_size=12,
)


@given(frame_specs, st.integers(min_value=1, max_value=50))
def test_every_byte_is_delivered_read_as_control_or_forwarded_in_order(
    specs: list[tuple[str, bytes]], step: int
) -> None:
    stream = bytearray()
    expected: list[bytes | str] = []
    pings: list[tuple[int, bytes]] = []
    other = bytearray()
    for kind, payload in specs:
        if kind == "text":
            text = payload.decode("latin-1")
            frame = client_frame(TEXT, text.encode())
            expected.append(text)
        elif kind == "binary":
            frame = client_frame(BINARY, payload)
            expected.append(payload)
        elif kind == "ping":
            frame = client_frame(PING, payload[:125])
            pings.append((PING, payload[:125]))
        elif kind == "fragmented":
            frame = client_frame(BINARY, payload, fin=False) + client_frame(CONT, b"", fin=True)
            other += frame
        else:
            frame = client_frame(BINARY, payload, masked=False)
            other += frame
        stream += frame
    sink = Sink(max_size=1000)
    sink.feed(bytes(stream), step)
    assert sink.delivered == expected
    assert sink.controls == pings
    assert sink.forwarded == other


def test_once_discarding_nothing_more_is_read_not_even_the_rest_of_the_read() -> None:
    sink = Sink()
    pings = b"".join(client_frame(PING, bytes([i])) for i in range(5))

    def control(opcode: int, payload: bytes) -> None:
        sink.controls.append((opcode, payload))
        if len(sink.controls) == 2:
            sink.reader.discard()  # as the connection does when it drops its client

    sink.reader = FrameReader(sink.delivered.append, sink.forwarded.extend, 1000, control)
    sink.feed(pings + client_frame(TEXT, b"late"))
    sink.feed(client_frame(TEXT, b"later"))
    assert sink.controls == [(PING, b"\x00"), (PING, b"\x01")]
    assert not sink.delivered and not sink.forwarded
