"""The paths made faster or smaller under load (docs/benchmarks/journal.md, "Load") keep their
promises: the compact message log, a call run at once in an idle room, finished games
closing sooner, and the plain ASGI path when frames cannot go straight to the socket."""

from __future__ import annotations

import asyncio
import random
import time
import tracemalloc

from dicehall.protocol import errors
from dicehall.protocol.messages.server import Chat, WindowClosed
from dicehall.protocol.subprotocols import Encoding
from dicehall.rules import get_game
from dicehall.server.backends.base import RoomSpec
from dicehall.server.backends.memory import MemoryBackend
from dicehall.server.connections.hub import Hub
from dicehall.server.edge.app import _read_socket
from dicehall.server.hosting.actor import CommitBatch, Pending, RoomActor
from dicehall.server.hosting.room_task import run_room, stop_room
from dicehall.server.rooms.commands import (
    ActCmd,
    ChatCmd,
    JoinCmd,
    LegalCmd,
    PresenceCmd,
    StartCmd,
    SyncCmd,
)
from dicehall.server.rooms.outgoing import (
    _DICTIONARIES,
    LOG_BLOCK,
    MSGPACK_ENCODER,
    MessageLog,
    Outgoing,
    _Dictionary,
    _pack_block,
    _sized,
    _split,
)
from dicehall.server.rooms.room import RoomCore

T0 = 1_767_225_600.0


def played_qwirkle(history: int) -> tuple[RoomCore, list[Outgoing]]:
    """A 3-seat Qwirkle room some turns in: every draw is a private message."""
    game = get_game("qwirkle")
    core = RoomCore("r1", game, game.resolve_options(), 3, 30, seed=b"s" * 32, history=history)
    out: list[Outgoing] = []
    for i in range(3):
        out += core.join(f"p{i}", i, f"n{i}", T0)[1]
    out += core.start(T0)
    rng = random.Random(7)
    for _ in range(12):
        assert core.state is not None
        seat = core.state.actors()[0]
        out += core.act(seat, rng.choice(core.state.legal_actions(seat)), core.window_id, T0)
    return core, out


def test_the_log_keeps_bytes_and_gives_every_variant_back() -> None:
    core, out = played_qwirkle(history=4096)
    assert len(core.log._blocks) == 2 and core.log._tailed == 6, "70 messages: 32 + 32 + 6"
    assert all(isinstance(block, bytes) for block in core.log._blocks)
    tail = [MSGPACK_ENCODER.encode(o.message) for o in out[64:]]
    assert _split(core.log._tail) == tail and bytes(core.log._tail) == _sized(tail)
    packed = sum(map(len, core.log._blocks))
    assert packed < sum(len(o.frame(None, Encoding.MSGPACK)) for o in out[:64]) / 2
    assert core.log._private, "the draws are private"
    back = list(core.log)
    assert [o.message for o in back] == [o.message for o in out]
    assert [o.private for o in back] == [o.private for o in out]
    for seat in (None, 0, 1, 2):
        assert core.since(0, seat) == [o.for_seat(seat) for o in out]


def test_a_short_log_forgets_old_private_variants_too() -> None:
    core, out = played_qwirkle(history=8)
    first = core.log.first_seq
    assert len(core.log) == 8 and first == core.seq - 7
    assert all(seq >= first for seq in core.log._private)
    assert core.since(first - 2, 0) is None, "aged out: the client gets a snapshot"
    assert core.since(first - 1, 1) == [o.for_seat(1) for o in out if o.seq >= first]


def test_the_compressed_log_keeps_exactly_the_last_messages_and_no_more_blocks() -> None:
    for history in (1, 8, LOG_BLOCK, 40, 128):
        core = RoomCore("r1", get_game("qwixx"), {}, 2, 30, history=history)
        sent: list[Outgoing] = []
        for i in range(3 * LOG_BLOCK + 5):
            sent += core.chat(0, "p0", f"line {i}")
            kept = sent[-history:]
            assert [o.message for o in core.log] == [o.message for o in kept]
            assert len(core.log) == len(kept) and core.log.first_seq == kept[0].seq
            assert core.since(kept[0].seq - 1, 0) == [o.message for o in kept]
            recent = kept[-3:]
            assert core.since(recent[0].seq - 1, None) == [o.message for o in recent]
            if kept[0].seq > 1:
                assert core.since(kept[0].seq - 2, 0) is None
            assert core.log._stored() < len(kept) + LOG_BLOCK, "aged-out blocks go"


def test_each_kind_of_log_is_compressed_with_its_own_first_block_as_dictionary() -> None:
    def chats(room: str, words: str, n: int) -> list[Outgoing]:
        return [
            Outgoing(Chat(room=room, seq=i + 1, sender="ann", text=f"{words} {i}", seat=0))
            for i in range(n)
        ]

    kinds = {"test-kind-dice": "roll the dice", "test-kind-x": "x"}  # (no game's names)
    logs: list[tuple[MessageLog, list[Outgoing]]] = []
    for kind, words in kinds.items():
        for room in ("first", "second"):
            log = MessageLog(4096, kind)
            sent = chats(room, words, 2 * LOG_BLOCK + 3)
            for out in sent:
                log.append(out)
            logs.append((log, sent))
        first = [MSGPACK_ENCODER.encode(o.message) for o in chats("first", words, LOG_BLOCK)]
        assert _DICTIONARIES[kind].data == _sized(first), "the kind's first block, uncompressed"
    for log, sent in logs:
        assert [o.message for o in log] == [o.message for o in sent], "each with its own"
    second, sent = logs[1]
    frames = [MSGPACK_ENCODER.encode(o.message) for o in sent[LOG_BLOCK : 2 * LOG_BLOCK]]
    assert len(second._blocks[1]) < len(_pack_block(_sized(frames), _Dictionary(b""))), (
        "primed: smaller"
    )


async def test_a_call_runs_at_once_in_an_idle_room_and_waits_its_turn_in_a_busy_one() -> None:
    game = get_game("qwixx")
    core = RoomCore("r1", game, game.resolve_options(), 2, 30)
    said: list[str] = []

    def commit(batch: CommitBatch) -> None:
        said.extend(o.message.text for o in batch.out if isinstance(o.message, Chat))

    actor = RoomActor(core, commit, run=run_room)
    actor.start()
    try:
        await actor.submit(ChatCmd(seat=None, sender="a", text="alone"))
        assert said == ["alone"]
        actor._put((ChatCmd(seat=None, sender="a", text="queued first"), None, None))
        await actor.submit(ChatCmd(seat=None, sender="a", text="then me"))
        assert said == ["alone", "queued first", "then me"]
        await actor.submit(ChatCmd(seat=None, sender="a", text="idle again"))
        assert said[-1] == "idle again" and actor._queued == 0
    finally:
        await stop_room(actor)


async def test_a_burst_from_one_client_lets_the_others_run_between_its_frames() -> None:
    """An idle room answers without suspending its caller, so the connection's reader
    yields itself between the frames of a burst."""
    order: list[str] = []

    class Reader:
        def __init__(self, frames: list[str]) -> None:
            self.frames = frames

        @property
        def waiting(self) -> bool:
            return bool(self.frames)

        async def receive(self) -> str | None:
            return self.frames.pop(0) if self.frames else None

    class Conn:
        closing = False

        def take(self, frame: str) -> None:
            order.append(frame)  # (no request: nothing to handle)

    async def other() -> None:
        for _ in range(3):
            order.append("other")
            await asyncio.sleep(0)

    others = asyncio.get_running_loop().create_task(other())
    await _read_socket(Reader(["a1", "a2", "a3"]), Conn())  # type: ignore[arg-type]
    await others
    assert order == ["a1", "other", "a2", "other", "a3", "other"]


async def test_an_idle_room_actor_is_small_and_a_stopped_one_cancels_what_waits() -> None:
    game = get_game("qwixx")
    cores = [RoomCore(f"r{i}", game, game.resolve_options(), 2, 30) for i in range(200)]
    gate = asyncio.Event()

    async def wait_for_the_gate() -> None:
        await gate.wait()

    def commit(batch: CommitBatch) -> Pending:
        return wait_for_the_gate()

    tracing = tracemalloc.is_tracing()  # (PYTHONTRACEMALLOC: a run that finds leaks)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        actors = [RoomActor(core, commit, run=run_room) for core in cores]
        for actor in actors:
            actor.start()
        await asyncio.sleep(0)
        per_actor = (tracemalloc.get_traced_memory()[0] - before) / len(actors)
    finally:
        if not tracing:
            tracemalloc.stop()
    assert per_actor < 2000, f"{per_actor:.0f} bytes per idle room actor (a Queue: 4.4 KB)"

    busy = actors[0]
    first = busy.submit(ChatCmd(seat=None, sender="a", text="1"))
    second = busy.submit(ChatCmd(seat=None, sender="a", text="2"))
    await asyncio.sleep(0.01)
    assert busy._queued == 2 and not first.done()
    await stop_room(busy, grace=0.05)  # the first never commits: cancelled, and what waits with it
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results) and busy._inbox == []
    gate.set()
    for actor in actors[1:]:
        await stop_room(actor)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


async def play_to_the_end(backend: MemoryBackend, room: str, rng: random.Random) -> None:
    for _ in range(500):
        window, actions, _ = await backend.call(room, LegalCmd(seat=0))
        if not actions:
            return
        await backend.call(room, ActCmd(seat=0, action=rng.choice(actions), window=window))
    raise AssertionError("the game did not end")


async def test_a_finished_game_nobody_is_in_closes_sooner_than_a_quiet_one() -> None:
    clock = Clock()
    backend = MemoryBackend(Hub(), idle_seconds=600, over_seconds=30, clock=clock)
    spec = RoomSpec(game="qwinto", options={}, seats=1, turn_window=30, public=True)
    try:
        rooms: list[str] = []
        for _ in range(2):
            room = (await backend.create(spec)).room
            await backend.call(room, JoinCmd(name="Ada", seat=0, nonce="n"))
            await backend.call(room, StartCmd(seat=0))
            rooms.append(room)
        finished, unfinished = rooms
        await play_to_the_end(backend, finished, random.Random(3))
        for room in rooms:
            await backend.call(room, PresenceCmd(seat=0, delta=-1))
        clock.now = time.time() + 31
        await backend.reap()
        listed = {r.room for r in await backend.rooms()}
        assert listed == {unfinished}
        assert await backend.record(finished) is not None, "its record outlives it"
        try:
            await backend.call(finished, SyncCmd(seat=None))
        except errors.NoSuchRoomError:
            pass
        else:
            raise AssertionError("the finished room should be closed")
    finally:
        await backend.stop()


async def test_a_room_follows_its_deadlines_with_one_timer_set_again_only_when_due() -> None:
    """Every roll opens a window with a later deadline: the timer set for the first is
    kept (no cancel and new timer per roll), and when it fires early it sets itself for
    the room's deadline of then; the window still expires at its own deadline."""
    game = get_game("qwixx")
    core = RoomCore("r1", game, game.resolve_options(), 2, 1)
    closed: list[float] = []

    def commit(batch: CommitBatch) -> None:
        closed.extend(time.time() for o in batch.out if isinstance(o.message, WindowClosed))

    actor = RoomActor(core, commit, run=run_room)
    actor.start()
    try:
        for seat in range(2):
            await actor.submit(JoinCmd(name=f"p{seat}", seat=seat, nonce="n"))
        await actor.submit(StartCmd(seat=0))
        timer, first = actor._timer, core.deadline
        assert timer is not None and first is not None
        await asyncio.sleep(0.2)
        window = core.window_id
        while core.window_id == window:  # every seat answers: the next window opens
            assert core.state is not None
            seat = core.state.actors()[0]
            action = core.state.legal_actions(seat)[0]
            await actor.submit(ActCmd(seat=seat, action=action, window=core.window_id))
        last = core.deadline
        assert last is not None and last > first
        assert actor._timer is timer, "a later deadline keeps the timer set"
        answered = len(closed)
        while len(closed) == answered:
            await asyncio.sleep(0.02)
            assert time.time() < last + 2, "the window never expired"
        assert closed[-1] >= last, "expired at its own deadline, not the first one's"
    finally:
        await stop_room(actor)
    assert actor._timer is None or actor._timer.cancelled()
