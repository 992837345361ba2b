"""The Lua scripts that write a room, with named, typed arguments and named statuses.

Each script binds its KEYS and ARGV to named locals on its first lines and answers with a
status word; the functions here build those lists from typed arguments and turn the word
into an enum, so no caller counts positions. Scripts run by their SHA1 (`Script`), and a
script's every check comes before its first write: one that returns early changed nothing.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass

import msgspec
from redis.exceptions import RedisError

from .keys import (
    handed_key,
    history_key,
    journal_key,
    lease_key,
    log_key,
    record_key,
    record_log_key,
    snap_key,
)
from .link import Link
from .resp import Script
from .resptypes import Arg, Reply


class Renewal(enum.StrEnum):
    RENEWED = "renewed"
    """The lease is this process's and runs for another `ttl`."""
    GONE = "gone"
    """Nobody holds it (it lapsed, or Redis lost it): write the room back to hold it again."""
    LOST = "lost"
    """Another process holds it: that process runs the room now."""


class Committed(enum.StrEnum):
    WRITTEN = "written"
    """Written, the lease held (or taken back), then published, then the reply kept."""
    HEARD = "heard"
    """WRITTEN, and the messages published reached another process: members elsewhere
    follow the room on its event channel."""
    FENCED = "fenced"
    """Not written: another process holds the lease, or the log is past this room's seq."""
    BEHIND = "behind"
    """Not written: the log (or the record's log) is behind the room, because Redis lost
    it: write again with `rewrite`."""


_RENEW = Script("""
-- Each lease of KEYS held by ARGV[1] runs for another ARGV[2] ms; each one's status.
local owner, ttl_ms = ARGV[1], ARGV[2]
local statuses = {}
for i, lease in ipairs(KEYS) do
  local holder = redis.call('get', lease)
  if holder == owner then
    redis.call('pexpire', lease, ttl_ms)
    statuses[i] = 'renewed'
  elseif not holder then
    statuses[i] = 'gone'
  else
    statuses[i] = 'lost'
  end
end
return statuses
""")

_RELEASE = Script("""
local lease, handed = KEYS[1], KEYS[2]
local owner, handed_ms = ARGV[1], tonumber(ARGV[2])
if redis.call('get', lease) ~= owner then return 'not held' end
redis.call('del', lease)
if handed_ms > 0 then redis.call('set', handed, '1', 'PX', handed_ms) end
return 'released'
""")

_COMMIT = Script("""
-- One room's commit: K its keys, A its arguments (`commit_args`).
local function commit(K, A)
  local lease, log, snap, record_key, record_log = K[1], K[2], K[3], K[4], K[5]
  local journal_key, history_key, reply_key = K[6], K[7], K[8]
  local owner, lease_ms, history = A[1], A[2], A[3]
  local snapshot, record, record_ttl = A[4], A[5], A[6]
  local rewrite, seq = A[7] == '1', tonumber(A[8])
  local publish, channel, payload = A[9], A[10], A[11]
  local record_done, record_new = tonumber(A[12]), A[13]
  local reply, reply_ms, reply_channel = A[14], A[15], A[16]
  local journal = A[17]
  local ENTRIES = 18  -- then seq, message pairs in order

  local holder = redis.call('get', lease)
  if holder and holder ~= owner then return 'fenced' end
  local last = 0
  local top = redis.call('xrevrange', log, '+', '-', 'COUNT', 1)
  if #top > 0 then last = tonumber(string.match(top[1][1], '^%d+')) end
  if last > seq then return 'fenced' end
  local first = seq + 1
  if #A >= ENTRIES then first = tonumber(A[ENTRIES]) end
  -- a commit sent again (its reply was lost) appends its commands once
  local fresh = last < first
  if rewrite then
    redis.call('del', log)
    last = 0
  else
    if last < first - 1 then return 'behind' end
    if record_done > 0 and redis.call('strlen', record_log) ~= record_done then
      return 'behind'
    end
  end
  redis.call('set', lease, owner, 'PX', lease_ms)
  if rewrite or record_done == 0 then
    redis.call('set', record_log, record_new)
  elseif record_new ~= '' then
    redis.call('append', record_log, record_new)
  end
  for i = ENTRIES, #A, 2 do
    if tonumber(A[i]) > last then
      redis.call('xadd', log, 'MAXLEN', '~', history, A[i] .. '-1', 'm', A[i + 1])
    end
  end
  if snapshot ~= '' then
    redis.call('set', snap, snapshot)
    redis.call('del', journal_key)
  elseif journal ~= '' and fresh then
    redis.call('rpush', journal_key, journal)
  end
  if record ~= '' then
    redis.call('set', record_key, record, 'EX', record_ttl)
    -- the game's end: history must have it (noted as long as the record is kept)
    redis.call('set', history_key, 'waiting', 'NX', 'EX', record_ttl)
  end
  local heard = false
  if payload ~= '' then heard = redis.call(publish, channel, payload) > 0 end
  if reply ~= '' then
    redis.call('set', reply_key, reply, 'PX', reply_ms)
    redis.call(publish, reply_channel, reply)
  end
  if heard then return 'heard' end
  return 'written'
end

-- ARGV[1] rooms, then per room: its key count, its argument count, its arguments; KEYS
-- holds each room's keys in the same order. A room's status does not stop the others.
local statuses = {}
local k, a = 0, 2
for r = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local K, A = {}, {}
  for i = 1, nk do K[i] = KEYS[k + i] end
  for i = 1, na do A[i] = ARGV[a + i - 1] end
  k, a = k + nk, a + na
  statuses[r] = commit(K, A)
end
return statuses
""")


class RidingReply(msgspec.Struct):
    """A forwarded command's answer that rides with the commit its command made: kept in
    `key` and published on `channel` by the commit's own script."""

    key: str
    channel: str
    data: bytes


@dataclass(slots=True, kw_only=True)
class CommitArgs:
    """One fenced, atomic write of a room: its new log entries, snapshot and record."""

    owner: str
    lease_ms: int
    history: int
    """The log's length (approximate MAXLEN)."""
    snapshot: bytes
    """The room's snapshot, or b"" to keep the last one and append `journal` instead."""
    seq: int
    """The room's seq: the log may not be past it."""
    entries: list[tuple[int, bytes]]
    """(seq, packed message) in order."""
    record: bytes = b""
    """The whole record, once the game is over."""
    record_ttl: int = 0
    record_done: int = 0
    """Bytes of the record's log Redis holds already (0: write it whole)."""
    record_new: bytes = b""
    """The record log's bytes after those."""
    rewrite: bool = False
    """The entries replace the log and the record's log (Redis lost them)."""
    publish: str = "publish"
    """`publish`, or `spublish` in a cluster."""
    channel: str = ""
    payload: bytes = b""
    """Published on `channel` once written ('' publishes nothing)."""
    reply: RidingReply | None = None
    reply_ms: int = 0
    journal: bytes = b""
    """The commands run since the last commit (server/hosting/journal.py), when no snapshot."""


def _word(raw: Reply) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


Call = tuple[list[str], list[Arg]]
"""One room's commit: its keys and its arguments."""


def commit_args(room: str, args: CommitArgs) -> Call:
    keys = [lease_key(room), log_key(room), snap_key(room), record_key(room)]
    keys += [record_log_key(room), journal_key(room), history_key(room)]
    reply = args.reply
    if reply is not None:
        keys.append(reply.key)
    argv: list[Arg] = [
        args.owner,
        args.lease_ms,
        args.history,
        args.snapshot,
        args.record,
        args.record_ttl,
        1 if args.rewrite else 0,
        args.seq,
        args.publish,
        args.channel,
        args.payload,
        args.record_done,
        args.record_new,
        b"" if reply is None else reply.data,
        args.reply_ms,
        "" if reply is None else reply.channel,
        args.journal,
    ]
    for seq, entry in args.entries:
        argv += [seq, entry]
    return keys, argv


async def commit(link: Link, calls: list[Call]) -> list[Committed]:
    """Commit several rooms in one script call, atomically; each room's status in order.
    (In a cluster, only rooms whose keys share a slot: one room, in practice.)"""
    keys: list[str] = []
    argv: list[Arg] = [len(calls)]
    for room_keys, room_args in calls:
        keys += room_keys
        argv += [len(room_keys), len(room_args)]
        argv += room_args
    reply = await link.script(_COMMIT, keys, argv)
    if not isinstance(reply, list) or len(reply) != len(calls):
        raise RedisError(f"a commit of {len(calls)} rooms answered {reply!r}")
    return [Committed(_word(word)) for word in reply]


RENEW_MAX = 1000
"""Leases per renewal call."""


async def renew(link: Link, rooms: list[str], owner: str, ttl_ms: int) -> list[Renewal]:
    """Renew the leases of `rooms` in one script call (one per room in a cluster, sent
    together); each one's status in order."""
    if link.multi_room:  # (in calls of a few milliseconds of Redis's time at most)
        leases = [lease_key(room) for room in rooms]
        calls = [leases[i : i + RENEW_MAX] for i in range(0, len(leases), RENEW_MAX)]
    else:
        calls = [[lease_key(room)] for room in rooms]
    replies = await asyncio.gather(*(link.script(_RENEW, keys, [owner, ttl_ms]) for keys in calls))
    statuses = [word for reply in replies for word in (reply if isinstance(reply, list) else [])]
    if len(statuses) != len(rooms):
        raise RedisError(f"renewing {len(rooms)} leases answered {replies!r}")
    return [Renewal(_word(word)) for word in statuses]


async def release(link: Link, room: str, owner: str, handed_ms: int = 0) -> bool:
    """Give the lease up if `owner` holds it; True if it did. `handed_ms`: the room is
    handed over with everything written (`handed_key`, kept this long)."""
    keys = [lease_key(room), handed_key(room)]
    return _word(await link.script(_RELEASE, keys, [owner, handed_ms])) == "released"
