"""Every Redis key and channel name of a deployment, in one place.

A room's keys and channels share the hash tag `{room}`, so in a cluster a room lives on one
shard (its commit script may touch them all); a process's reply key and channel share
`{proc-ID}`, on the asker's shard.
"""

from __future__ import annotations

LOBBY = "dh:lobby"
"""Hash: room id -> its lobby entry (MessagePack `RoomInfo`), for rooms not over."""
SECRET = "dh:token-secret"
"""The seat-token signing key every process shares (unless set by the operator)."""
HISTORY_WAITING = "dh:history:waiting"
"""Set: rooms whose finished game may not be in the history database yet. Added to by the
owner just before the commit that ends the game, taken off once a writer has stored it.
Every process sweeps it for rooms whose owner died first (`Leases.sweep_history`). In a
cluster it lives on whichever shard its name hashes to, and a room's keys on theirs: every
command on it names it alone, never in a script or MULTI with a room's keys (CROSSSLOT)."""
RECORD_TTL = 7 * 24 * 3600
"""Seconds a finished game's record is kept."""


def lease_key(room: str) -> str:
    """The owning process's id, with a TTL its owner renews."""
    return f"dh:{{{room}}}:lease"


def snap_key(room: str) -> str:
    """The room's snapshot (server/rooms/snapshot.py), as of the log's last entry."""
    return f"dh:{{{room}}}:snap"


def log_key(room: str) -> str:
    """The stream of the room's numbered messages: entry `seq-1` is message `seq`."""
    return f"dh:{{{room}}}:log"


def record_log_key(room: str) -> str:
    """The game record's log, appended to as the game goes (the snapshot says how long)."""
    return f"dh:{{{room}}}:rlog"


def journal_key(room: str) -> str:
    """The commands run since the snapshot, a batch per commit (server/hosting/journal.py)."""
    return f"dh:{{{room}}}:journal"


def record_key(room: str) -> str:
    """A finished game's whole record (JSON), kept `RECORD_TTL` seconds."""
    return f"dh:{{{room}}}:record"


def history_key(room: str) -> str:
    """Whether the finished game reached the history database: `waiting` from the commit
    that ended it (set once, in that commit's script), `stored` once a writer has it (or
    the database refused it for good); kept `RECORD_TTL` seconds either way. The owner
    keeps a room `waiting` open; one that takes it over hands it to history again."""
    return f"dh:{{{room}}}:history"


def handed_key(room: str) -> str:
    """Set when the room's owner let it go in order, with everything written: the next
    owner goes on in the same epoch (docs/protocol.md, "Epochs")."""
    return f"dh:{{{room}}}:handed"


def command_channel(room: str) -> str:
    """Where other processes send the room's owner their commands."""
    return f"dh:{{{room}}}:cmd"


def event_channel(room: str) -> str:
    """Where the owner publishes the room's messages once committed."""
    return f"dh:{{{room}}}:ev"


def process_key(proc: str) -> str:
    """Where process `proc` takes connections (its `--public-url`), while it runs."""
    return f"dh:proc:{proc}:url"


def reply_channel(proc: str) -> str:
    """Where owners answer the commands process `proc` forwarded."""
    return f"dh:{{proc-{proc}}}:reply"


def reply_key(proc: str, rid: int) -> str:
    """A reply is also kept here a while: one published while the asker's pub/sub
    connection was down (CLIENT KILL, a blip) is not lost, only late."""
    return f"dh:{{proc-{proc}}}:reply:{rid}"


def room_of(channel: bytes) -> str:
    """The room whose command or event channel this is."""
    return channel.decode().split("{", 1)[1].split("}", 1)[0]
