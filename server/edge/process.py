"""The process: the composition root. `Server` builds the backend (memory or Redis), the
hub, the sessions' services, the house bots and the metrics from a `Config`, and runs
their lifecycle (start, drain, stop) and the demo rooms.

The Starlette edge (server/edge/app.py) only holds one `Server` in its lifespan; tests and
benchmarks build one directly, with or without a socket in front of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time

from dicehall.protocol.close import CloseCode

from ..backends import Backend, MemoryBackend, RoomSpec
from ..cancelling import cancel_and_wait
from ..connections.bounds import RoomBounds
from ..connections.housebots import HouseBot
from ..connections.hub import Hub
from ..connections.identity import PlayerKeys
from ..connections.outbox import Flusher
from ..connections.peer import Peer
from ..connections.session import Services, Settings
from ..connections.tokens import TokenSigner
from ..history.paths import outbox_folder
from ..history.service import HistoryService
from ..metrics import ServerMetrics
from ..rooms.commands import AddBotsCmd
from .gate import Gate
from .settings import Config

log = logging.getLogger("dicehall.server")

DRAINING = "server shutting down; reconnect"
RETRY_MS = 1000
"""What a draining server tells its clients: reconnect (to another process) after this."""
DB_START_SECONDS = 3.0
"""How long a starting server waits for its history database before serving without it."""


class Server:
    """The process: backend, hub, sessions, bots and metrics, built by the lifespan."""

    def __init__(self, config: Config, backend: Backend | None = None) -> None:
        self.config = config
        self.limits = config.limits
        self.hub = Hub()
        self.metrics = ServerMetrics(
            connections=lambda: len(self.peers),
            house_bots=lambda: len(self.bots),
            stats=lambda: self.backend.stats(),
        )
        self.backend = backend or self._backend()
        self.history: HistoryService | None = None
        """Finished games to the database (`--db`); None: no history kept."""
        if config.db is not None and config.db != "none":
            self.history = HistoryService(config.db, outbox_folder(config.db))
            self.backend.host.on_game_over = self.history.finished
            self.history.on_stored = self.backend.history_stored
            self.metrics.registry.register(self.history)
        secret = config.secret or secrets.token_bytes(32)
        self.services = Services(
            rooms=self.backend,
            hub=self.hub,
            signer=TokenSigner(secret),
            players=PlayerKeys(secret),
            settings=Settings(
                default_turn_window=config.turn_window,
            ),
            errors=self.metrics.errors,
            bounds=RoomBounds(
                self.backend.host.actors, config.max_rooms, config.max_rooms_per_address
            ),
        )
        self.peers: set[Peer] = set()
        self.flusher = Flusher()
        """Writes what the peers queued in a turn, from one callback
        (server/connections/outbox.py)."""
        self.gate = Gate(
            config.max_pending, config.max_pending_per_address, config.forwarded_allow_ips
        )
        """Connections not yet past `hello`, bounded (server/edge/gate.py: `dicehall serve`)."""
        self.metrics.registry.register(self.gate)
        self.bots: dict[tuple[str, int], HouseBot] = {}
        self.draining = False
        self._tasks: list[asyncio.Task[None]] = []
        self._host_key = secrets.token_urlsafe(16)
        self.fanout_latency = self.metrics.fanout_latency
        self.slow_dropped = self.metrics.slow_dropped
        self.transports = self.metrics.transports

    def _backend(self) -> Backend:
        backend = self._new_backend()
        backend.public_url = self.config.public_url
        return backend

    def _new_backend(self) -> Backend:
        config = self.config
        if config.redis is None:
            return MemoryBackend(
                self.hub,
                spawn_bot=self.spawn_bot,
                drop_bots=self.drop_bots,
                idle_seconds=config.idle_seconds,
                empty_seconds=config.empty_seconds,
            )
        from ..backends.redis import RedisBackend

        return RedisBackend(
            self.hub,
            config.redis,
            spawn_bot=self.spawn_bot,
            drop_bots=self.drop_bots,
            cluster=config.redis_cluster,
            lease_ms=config.lease_ms,
            idle_seconds=config.idle_seconds,
            empty_seconds=config.empty_seconds,
            reply_timeout=config.redis_timeout,
            write_behind_ms=config.write_behind_ms if config.durability == "behind" else None,
        )

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self.history is not None:
            await self.history.start()
        await self.backend.start()
        if self.config.secret is None:
            shared = await self.backend.shared_secret()
            if shared is not None:
                self.services.signer = TokenSigner(shared)
                self.services.players = PlayerKeys(shared)
            if self.history is not None:
                await self._player_keys_from_history()
        if self.config.demo_rooms:
            self._tasks.append(asyncio.get_running_loop().create_task(self._keep_demo_rooms()))

    async def _player_keys_from_history(self) -> None:
        """Sign player keys with the history database's secret: it outlives any process
        and any Redis, so keys survive restarts with no secret configured. A database
        that is not reachable at start (DB_START_SECONDS) leaves `identity` off (hellos
        get no player) until it is, rather than hand out keys that would not last."""
        history = self.history
        assert history is not None
        self.services.players = None

        async def sign() -> None:
            store = await history.opened(None)
            assert store is not None
            self.services.players = PlayerKeys(await store.signing_secret())

        signing = asyncio.get_running_loop().create_task(sign())
        self._tasks.append(signing)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(signing), DB_START_SECONDS)

    async def stop(self) -> None:
        await self.drain()
        await cancel_and_wait(self._tasks)
        for bot in list(self.bots.values()):
            await bot.stop()
        await self.backend.stop()
        if self.history is not None:
            await self.history.stop()  # (after the rooms: their last games are in its outbox)

    def say_goodbye(self, peer: Peer) -> None:
        """The server is going: no new work, and this client is told to go (1001)."""
        self.draining = True
        peer.close(CloseCode.GOING_AWAY, DRAINING, retry_ms=RETRY_MS)

    async def drain(self) -> None:
        """Tell every client to go and let the goodbyes out (under `dicehall serve`,
        uvicorn has done this through each socket's `on_shutdown` by now)."""
        for peer in list(self.peers):
            self.say_goodbye(peer)
        self.draining = True
        deadline = time.monotonic() + self.config.drain_seconds
        while self.peers and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    # --- house bots ------------------------------------------------------------------------

    def spawn_bot(self, room: str, seat: int, kind: str) -> None:
        """Seat a house bot where the room runs (the owner, in scale-out mode)."""
        previous = self.bots.pop((room, seat), None)
        if previous is not None:
            asyncio.get_running_loop().create_task(previous.stop())
        bot = HouseBot(self.services, room, seat, kind, self.backend.game_of(room))
        self.bots[(room, seat)] = bot
        bot.start()

    def drop_bots(self, room: str) -> None:
        """The room left this process (handed over or lost): its bots go with it."""
        for key in [k for k in self.bots if k[0] == room]:
            asyncio.get_running_loop().create_task(self.bots.pop(key).stop())

    async def _keep_demo_rooms(self) -> None:
        """One open room per game, every other seat the strongest house bot the game has: a
        newcomer plays at once, against the default opponent of the web client's lobby."""
        from dicehall.rules import all_games
        from dicehall.rules.bots import bot_names

        while True:
            rooms = await self.backend.rooms()
            open_games = {r.game for r in rooms if r.status == "open"}
            for game in all_games():
                if game.name in open_games:
                    continue
                seats = min(2, game.max_seats)
                info = await self.backend.create(
                    RoomSpec(
                        game=game.name,
                        options=game.resolve_options(),
                        seats=seats,
                        turn_window=self.config.turn_window,
                        public=True,
                        name=f"{game.title}: play the strong house bot",
                        autostart=True,
                        host_key=self._host_key,
                    )
                )
                kinds = bot_names(game.name)
                kind = "strong" if "strong" in kinds else kinds[0]
                await self.backend.call(
                    info.room, AddBotsCmd(kind=kind, count=seats - 1, host_key=self._host_key)
                )
            await asyncio.sleep(1.0)
