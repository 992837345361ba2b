"""How many rooms may be created: per process, and per client network address.

A connection may host only so many rooms at once (`Settings.max_rooms_per_session`), but
connections are cheap: 202 of them made 3,234 public rooms in under a second (issue 39).
So rooms are bounded where connections cannot multiply them: the rooms this process runs
(`--max-rooms`, refused with `overloaded`), and the rooms whose game is not over that
the connections from one address created here (`--max-rooms-per-address`, refused with
`too-many-rooms`). docs/operations.md, "Bounds on rooms", says what a client sees.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable

from dicehall.protocol import errors
from dicehall.protocol.messages.common import RoomInfo

from ..hosting.local import LocalRooms

IPV6_PREFIX = 64
"""An IPv6 client counts by its /64 network: one subscriber gets a whole /64 (RFC 6177),
so its 2^64 addresses are one address here."""


def address_key(address: str | None) -> str | None:
    """What the per-address bound counts `address` as: its IPv4 address, or its IPv6 /64
    network; None (no bound) for no address and for loopback, whose connections come from
    the machine itself (the operator's load test, or a proxy there that did not say whose
    connection it passed on: then every player would be one address). An address that is
    not an IP (another ASGI server's idea of a client) counts as itself."""
    if address is None:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


class RoomBounds:
    """The backend's `create`, within the bounds. Rooms counted per address are those this
    process still runs and whose game is not over, as the backend says when asked (a room
    closed, finished or handed to another process counts no more): nothing to keep in
    step with the rooms' ends."""

    def __init__(self, here: LocalRooms, max_rooms: int, per_address: int) -> None:
        self.here = here
        """The rooms this process runs (the host's)."""
        self.max_rooms = max_rooms
        self.per_address = per_address
        """0: no bound."""
        self._hosted: dict[str, list[str]] = {}
        """Per address key: the rooms created from it that counted when last looked at."""
        self._tracked = 0
        """Room ids in `_hosted`: past twice `max_rooms` every address is looked at again,
        so addresses that never come back cost nothing for long."""
        self._creating: dict[str | None, int] = {}
        """Creates under way, per address key (None: every one), counted as rooms already:
        two at once may not both take the last place."""

    async def create(
        self, address: str | None, create: Callable[[], Awaitable[RoomInfo]]
    ) -> RoomInfo:
        """`create()` a room for a connection from `address`, or refuse it."""
        key = address_key(address) if self.per_address else None
        if len(self.here) + self._creating.get(None, 0) >= self.max_rooms:
            raise errors.OverloadedError(
                "this server runs as many rooms as it may; try again later"
            )
        if key is not None and self._count(key) >= self.per_address:
            raise errors.TooManyRoomsError(
                f"the connections from your network address host {self.per_address} rooms"
                " already: finish a game first, or wait for a room nobody sits in to close"
            )
        for k in {None, key}:
            self._creating[k] = self._creating.get(k, 0) + 1
        try:
            info = await create()
        finally:
            for k in {None, key}:
                self._creating[k] -= 1
                if not self._creating[k]:
                    del self._creating[k]
        if key is not None:
            self._hosted.setdefault(key, []).append(info.room)
            self._tracked += 1
        return info

    def _count(self, key: str) -> int:
        """Rooms `key` hosts now, creates under way included."""
        if self._tracked > 2 * self.max_rooms:
            for other in list(self._hosted):
                self._prune(other)
        return self._prune(key) + self._creating.get(key, 0)

    def _prune(self, key: str) -> int:
        rooms = self._hosted.get(key)
        if rooms is None:
            return 0
        kept = [room for room in rooms if self._hosts(room)]
        self._tracked -= len(rooms) - len(kept)
        if kept:
            self._hosted[key] = kept
        else:
            del self._hosted[key]
        return len(kept)

    def _hosts(self, room: str) -> bool:
        core = self.here.core(room)
        return core is not None and core.status != "over"
