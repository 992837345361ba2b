"""The client's per-connection protocol: ids, typed replies, sequence tracking."""

from __future__ import annotations

import pytest

from dicehall.protocol import (
    ClientConnection,
    Encoding,
    Event,
    Gap,
    Hello,
    HelloResult,
    Join,
    JoinResult,
    Ping,
    PingResult,
    Response,
    Send,
    ServerConnection,
    Snapshot,
    Spectate,
    Welcome,
    encode,
    errors,
)
from dicehall.protocol.messages.server import ErrorMessage, Reply

from .samples import ROOM


def event(seq: int, room: str = "r1") -> Event:
    return Event(room=room, seq=seq, event={"type": "roll", "n": seq})


def snapshot(seq: int, room: str = "r1") -> Snapshot:
    return Snapshot(room=room, seq=seq, seat=None, view={}, info=ROOM)


@pytest.fixture(params=list(Encoding))
def encoding(request: pytest.FixtureRequest) -> Encoding:
    return request.param  # type: ignore[no-any-return]


def test_requests_are_numbered_in_order(encoding: Encoding) -> None:
    c = ClientConnection(encoding, first_id=10)
    first, _ = c.request(Hello(id=0, client="t"))
    second, frame = c.request(Ping(id=0))
    assert (first.id, second.id) == (10, 11)
    assert set(c.pending) == {10, 11}
    assert isinstance(frame, bytes if encoding is Encoding.MSGPACK else str)


def test_replies_become_typed_responses(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    join, _ = c.request(Join(id=0, room="r1"))
    result = JoinResult(room="r1", seat=2, token="tok")
    [response] = c.receive(encode(Reply(id=join.id, ok=True, result=result), encoding))
    assert isinstance(response, Response) and response.ok
    assert response.request == join
    assert response.result == result
    assert c.pending == {}


def test_results_tolerate_fields_a_newer_server_adds(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    hello, _ = c.request(Hello(id=0, client="t"))
    reply = Reply(id=hello.id, ok=True, result={"name": "Ada", "motd": "hi"})
    [response] = c.receive(encode(reply, encoding))
    assert isinstance(response, Response) and response.result == HelloResult(name="Ada")


def test_error_replies_become_catalogue_exceptions(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    act, _ = c.request(Spectate(id=0, room="r1"))
    error = errors.IllegalActionError("row must increase", rule="row-increasing").body()
    [response] = c.receive(encode(Reply(id=act.id, ok=False, error=error), encoding))
    assert isinstance(response, Response) and not response.ok
    assert isinstance(response.error, errors.IllegalActionError)
    assert response.error.rule == "row-increasing"


def test_a_reply_nobody_asked_for_is_a_protocol_error(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    with pytest.raises(errors.InvalidMessageError):
        c.receive(encode(Reply(id=5, ok=True, result={}), encoding))


def test_a_result_of_the_wrong_shape_is_a_protocol_error(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    ping, _ = c.request(Ping(id=0))
    with pytest.raises(errors.InvalidMessageError):
        c.receive(encode(Reply(id=ping.id, ok=True, result={"time": "noon"}), encoding))


def test_unknown_message_types_are_skipped(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    frame = '{"type":"fireworks","colour":"red"}'
    data = (
        frame if encoding is Encoding.JSON else __import__("msgpack").packb({"type": "fireworks"})
    )
    assert c.receive(data) == []
    assert c.skipped == 1


def test_room_messages_are_deduplicated_and_gaps_reported(encoding: Encoding) -> None:
    c = ClientConnection(encoding)

    def seqs(*messages: object) -> list[object]:
        out = []
        for m in messages:
            for item in c.receive(encode(m, encoding)):  # type: ignore[arg-type]
                out.append(("gap", item.last_seq, item.seq) if isinstance(item, Gap) else item.seq)  # type: ignore[union-attr]
        return out

    assert seqs(snapshot(3), event(4), event(5)) == [3, 4, 5]
    assert seqs(event(5), event(4)) == []  # already seen (e.g. replayed after a resume)
    assert seqs(event(7), event(8)) == [("gap", 5, 7)]  # 6 is missing: hold back
    assert c.last_seq("r1") == 5
    assert seqs(event(6), event(7), event(8)) == [6, 7, 8]  # the resumed stream
    assert seqs(snapshot(20), event(21)) == [20, 21]  # a newer snapshot jumps ahead
    # an older one took the room back (a failover, docs/protocol.md "Epochs"): what came
    # after its seq never happened, and the next seqs are news again
    assert seqs(snapshot(18), event(19), event(20), event(21), event(22)) == [18, 19, 20, 21, 22]
    assert seqs(snapshot(22), event(22), event(23)) == [22, 23]  # the same seq: replaced too
    assert seqs(event(1, room="r2")) == [1]  # rooms are independent
    c.forget("r1")
    assert c.last_seq("r1") is None


def test_welcome_is_kept(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    server = ServerConnection(encoding, now=0)
    [welcome] = c.receive(server.welcome("dicehall/x"))
    assert isinstance(welcome, Welcome) and c.welcome == welcome


def test_client_and_server_connections_talk(encoding: Encoding) -> None:
    """A whole exchange through both sans-I/O halves, the server side answering by hand."""
    client = ClientConnection(encoding)
    server = ServerConnection(encoding, now=0.0)
    assert isinstance(client.receive(server.welcome("dicehall/test"))[0], Welcome)

    def roundtrip(message: object, now: float) -> list[object]:
        _, frame = client.request(message)  # type: ignore[arg-type]
        got: list[object] = []
        for item in server.receive(frame, now):
            if isinstance(item, Send):
                got += client.receive(item.frame)
            elif isinstance(item, Hello):
                got += client.receive(server.reply(item.id, HelloResult(name=item.name)))
            elif isinstance(item, Ping):
                got += client.receive(server.reply(item.id, PingResult(time=1000, echo=item.time)))
            else:
                got += client.receive(
                    server.fail(item.id, errors.NoSuchRoomError(request_id=item.id))
                )
        return got

    [early] = roundtrip(Ping(id=0, time=5), 0.0)
    assert isinstance(early, Response) and isinstance(early.error, errors.HelloFirstError)
    [hello] = roundtrip(Hello(id=0, client="t", name="Ada"), 0.1)
    assert isinstance(hello, Response) and hello.result == HelloResult(name="Ada")
    [pong] = roundtrip(Ping(id=0, time=5), 0.2)
    assert isinstance(pong, Response) and pong.result == PingResult(time=1000, echo=5)
    [missing] = roundtrip(Spectate(id=0, room="nowhere"), 0.3)
    assert isinstance(missing, Response) and isinstance(missing.error, errors.NoSuchRoomError)
    assert client.pending == {} and server.pending == frozenset()


def test_unsolicited_errors_are_delivered(encoding: Encoding) -> None:
    c = ClientConnection(encoding)
    body = errors.MalformedError("bad").body()
    [message] = c.receive(encode(ErrorMessage(error=body), encoding))
    assert isinstance(message, ErrorMessage) and message.error.code == 1001


def test_adopted_seqs_replace_those_it_was_made_with(encoding: Encoding) -> None:
    """A move: the seqs the old connection reached win over the stale ones the new one was
    made with (a room taken back since has a lower one), not over what it received."""
    c = ClientConnection(encoding, last_seqs={"r1": 30, "r2": 7})
    assert [m.seq for m in c.receive(encode(event(8, room="r2"), encoding))] == [8]  # type: ignore[union-attr]
    c.adopt({"r1": 27, "r2": 7})
    assert (c.last_seq("r1"), c.last_seq("r2")) == (27, 8)
    assert [m.seq for m in c.receive(encode(event(28), encoding))] == [28]  # type: ignore[union-attr]
