"""protocol/wsframes.py: frame headers written and parsed and payloads masked, both
directions, checked against websockets' own serializer and parser and the hand-written
client frames of tests/support/frames.py."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from dicehall.protocol.wsframes import (
    BINARY,
    CLOSE,
    CONTINUATION,
    FIN,
    MASKED,
    PING,
    PONG,
    TEXT,
    mask,
    masked_frame,
    pack_header,
    pack_masked_header,
    parse_header,
)
from tests.support.frames import client_frame

SIZES = (0, 1, 125, 126, 127, 65535, 65536, 70_000)
LENGTH_BYTES = {0: 0, 1: 0, 125: 0, 126: 2, 127: 2, 65535: 2, 65536: 8, 70_000: 8}
UNTIMED = settings(deadline=None)
"""No per-example deadline: on a busy shared machine a slow example is not a failure."""


def test_the_opcodes_and_bits_are_rfc_6455s() -> None:
    opcodes = (CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG)
    assert opcodes == tuple(Opcode)
    assert FIN == MASKED == 0x80


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("masked", [False, True])
def test_a_written_header_parses_back(size: int, masked: bool) -> None:
    first = FIN | BINARY
    head = pack_masked_header(first, size) if masked else pack_header(first, size)
    assert len(head) == 2 + LENGTH_BYTES[size]
    key = b"\x01\x02\x03\x04" if masked else b""
    start = len(head) + len(key)
    assert parse_header(head + key, 0, start) == (first, head[1], start, start + size)
    assert bool(head[1] & MASKED) is masked


@pytest.mark.parametrize("size", SIZES)
def test_a_server_header_is_what_websockets_writes(size: int) -> None:
    for opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.PING):
        if opcode is Opcode.PING and size > 125:
            continue  # (a control frame's payload is 125 bytes at most)
        for fin in (True, False) if opcode is not Opcode.PING else (True,):
            frame = Frame(opcode, bytes(size), fin=fin).serialize(mask=False)
            head = pack_header((FIN if fin else 0) | opcode, size)
            assert frame == head + bytes(size)


@pytest.mark.parametrize("size", SIZES)
def test_a_client_header_is_what_websockets_writes_but_the_key(size: int) -> None:
    frame = Frame(Opcode.TEXT, bytes(size)).serialize(mask=True)
    head = pack_masked_header(FIN | TEXT, size)
    assert frame[: len(head)] == head
    assert len(frame) == len(head) + 4 + size


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("masked", [False, True])
def test_an_incomplete_header_parses_to_none(size: int, masked: bool) -> None:
    frame = client_frame(BINARY, bytes(size), masked=masked)
    start = 2 + LENGTH_BYTES[size] + (4 if masked else 0)
    for cut in range(start):
        assert parse_header(frame, 0, cut) is None, cut
        assert parse_header(b"junk" + frame[:cut], 4, 4 + cut) is None, cut
    # The header whole, the payload not yet: where it will end, past what is there.
    assert parse_header(frame[:start], 0, start) == (0x82, frame[1], start, start + size)


@UNTIMED
@given(
    st.lists(
        st.tuples(
            st.integers(0, 15),  # opcode, reserved ones included
            st.booleans(),  # fin
            st.booleans(),  # masked
            st.integers(0, 7),  # RSV1-3
            st.binary(max_size=300),  # 7- and 16-bit lengths (64-bit ones: above and below)
        ),
        max_size=8,
    ),
    st.binary(max_size=3),
)
def test_a_stream_of_frames_parses_frame_by_frame(
    specs: list[tuple[int, bool, bool, int, bytes]], prefix: bytes
) -> None:
    stream = bytearray(prefix)
    for opcode, fin, masked, rsv, payload in specs:
        stream += client_frame(opcode, payload, fin=fin, masked=masked, rsv=rsv)
    pos = len(prefix)
    for opcode, fin, masked, rsv, payload in specs:
        parsed = parse_header(stream, pos, len(stream))
        assert parsed is not None
        first, second, start, end = parsed
        assert first == (FIN if fin else 0) | rsv << 4 | opcode
        assert bool(second & MASKED) is masked
        assert end - start == len(payload)
        assert start - pos == len(pack_header(first, len(payload))) + (4 if masked else 0)
        if masked:
            key = stream[start - 4 : start]
            data = bytes(b ^ key[i % 4] for i, b in enumerate(stream[start:end]))
        else:
            data = bytes(stream[start:end])
        assert data == payload
        pos = end
    assert pos == len(stream)
    assert parse_header(stream, pos, len(stream)) is None


@UNTIMED
@given(st.integers(0, 255), st.integers(0, 2**63 - 1), st.booleans())
def test_any_length_round_trips(first: int, size: int, masked: bool) -> None:
    head = pack_masked_header(first, size) if masked else pack_header(first, size)
    key = bytes(4) if masked else b""
    start = len(head) + len(key)
    assert parse_header(head + key, 0, start) == (first, head[1], start, start + size)


def test_mask_is_the_xor_of_rfc_6455_and_its_own_inverse() -> None:
    for size in (0, 1, 3, 4, 5, 125, 126, 70_000):
        data, key = os.urandom(size), os.urandom(4)
        masked = mask(data, key)
        assert masked == bytes(b ^ key[i % 4] for i, b in enumerate(data))
        assert mask(bytearray(masked), bytearray(key)) == data


@pytest.mark.parametrize("size", SIZES)
def test_websockets_reads_a_masked_frame_back(size: int) -> None:
    server = ServerProtocol(state=State.OPEN, max_size=None)
    payload, key = os.urandom(size), os.urandom(4)
    frame = masked_frame(FIN | BINARY, payload, key)
    assert frame[len(pack_masked_header(FIN | BINARY, size)) :][:4] == key
    server.receive_data(frame)
    [read] = server.events_received()
    assert (read.opcode, read.fin, read.data) == (Opcode.BINARY, True, payload)
