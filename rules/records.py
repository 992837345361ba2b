"""Game records: everything needed to replay a game exactly (docs/records.md).

A record is plain JSON so it can be written by hand to set up any position: every chance
outcome is written out in the log, so replay needs no seed. When the record carries the
revealed seed, replay also proves the dice were fair: the seed matches the commitment and
every written outcome is the one the seed gives.

Replay also keeps, for every log entry, the scores after it: what each action, time-out
or roll was worth to every seat, so a game can be studied move by move without rerunning
the engine (`Replay.to_json()["log"]`, docs/records.md).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .base import JSON, State
from .errors import RecordError, RulesError
from .fair import commitment as commit_to
from .registry import get_game

FORMAT = "dicehall-record/1"
_NO_SEED = bytes(32)


EntryKind = Literal["action", "timeout", "chance"]


@dataclass(frozen=True)
class Step:
    """One log entry as replayed, with every seat's score before and after it.

    Both are kept (not only the change) so that the running scores need no summing and a
    game whose scores are not 0 at the start would still read right.
    """

    index: int
    """Its position in the record's log, counted from 0 (as `RecordError.index`)."""
    kind: EntryKind
    seat: int | None
    """The seat that acted or timed out; None for a roll or a draw."""
    action: JSON | None
    """The action as written (kind "action" only)."""
    chance: JSON | None
    """The outcome as written (kind "chance" only)."""
    before: tuple[int, ...]
    after: tuple[int, ...]

    def to_json(self, names: list[str]) -> JSON:
        """The documented shape (docs/records.md): every key always present, null when it
        does not apply, so a script never has to test for a key."""
        return {
            "index": self.index,
            "kind": self.kind,
            "seat": self.seat,
            "name": None if self.seat is None else names[self.seat],
            "action": copy.deepcopy(self.action),
            "chance": copy.deepcopy(self.chance),
            "delta": {n: self.after[i] - self.before[i] for i, n in enumerate(names)},
            "scores": {n: self.after[i] for i, n in enumerate(names)},
        }


@dataclass
class Replay:
    """The outcome of replaying a record."""

    state: State
    names: list[str]
    verified: bool | None
    """True: seed given and every roll checked; None: the record carries no seed."""
    steps: list[Step] = field(default_factory=list)
    """One per log entry, in log order: who did what and what it did to the scores."""

    def to_json(self) -> JSON:
        s = self.state
        scores = s.scores()
        return {
            "game": s.game_name,
            "over": s.is_over(),
            "scores": {n: scores[i] for i, n in enumerate(self.names)},
            "winners": [self.names[i] for i in s.winners()] if s.is_over() else [],
            "sheets": {n: s.render(i, n) for i, n in enumerate(self.names)},
            "seed_verified": self.verified,
            "log": [step.to_json(self.names) for step in self.steps],
        }


def new_record(
    game: str, options: Mapping[str, Any], names: list[str], state: State | None = None
) -> JSON:
    """An empty record; the commitment is filled from `state` when given."""
    rec: JSON = {"format": FORMAT, "game": game, "options": dict(options), "seats": list(names)}
    if state is not None:
        rec["commitment"] = state.commitment()
    rec["log"] = []
    return rec


def _field(rec: Mapping[str, Any], key: str, kind: type, index: int | None = None) -> Any:
    rule = "malformed-record" if index is None else "malformed-entry"
    if key not in rec:
        raise RecordError(f"missing {key!r}", rule, index)
    value = rec[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"{key!r} must be of type {kind.__name__}", rule, index)
    return value


def replay(record: object) -> Replay:
    """Replay a record through the engine; raises RecordError naming the entry and the rule."""
    if not isinstance(record, Mapping):
        raise RecordError("a record must be a JSON object", "malformed-record")
    fmt = record.get("format", FORMAT)
    if fmt != FORMAT:
        raise RecordError(f"unsupported record format {fmt!r}", "unsupported-format")
    name = _field(record, "game", str)
    names = _field(record, "seats", list)
    if not all(isinstance(n, str) for n in names):
        raise RecordError("seat names must be strings", "malformed-record")
    if len(set(names)) != len(names):
        raise RecordError("seat names must be distinct", "malformed-record")
    options = record.get("options", {})
    log = _field(record, "log", list)

    seed: bytes | None = None
    if record.get("seed") is not None:
        try:
            seed = bytes.fromhex(_field(record, "seed", str))
        except ValueError:
            raise RecordError("'seed' must be hex", "malformed-record") from None
        claimed = record.get("commitment")
        if claimed is not None and claimed != commit_to(seed):
            raise RecordError("the seed does not match the commitment", "commitment-mismatch")

    try:
        game = get_game(name)
        state = game.new_state(len(names), options, seed if seed is not None else _NO_SEED)
    except RulesError as exc:
        raise RecordError(exc.message, exc.rule) from None

    steps: list[Step] = []
    before = tuple(state.scores())
    for index, entry in enumerate(log):
        _apply_entry(state, entry, index, check_seed=seed is not None)
        after = tuple(state.scores())
        steps.append(_step(index, entry, before, after))
        before = after

    result = record.get("result")
    if isinstance(result, Mapping) and "scores" in result:
        scores = {n: state.scores()[i] for i, n in enumerate(names)}
        if dict(result["scores"]) != scores:
            raise RecordError(
                f"the recorded scores {dict(result['scores'])} differ from the replayed {scores}",
                "result-mismatch",
            )
    return Replay(state, list(names), True if seed is not None else None, steps)


def _step(
    index: int, entry: Mapping[str, Any], before: tuple[int, ...], after: tuple[int, ...]
) -> Step:
    """What an entry that `_apply_entry` accepted was (so its shape is known to be sound)."""
    if "chance" in entry:
        return Step(
            index, "chance", None, None, copy.deepcopy(dict(entry["chance"])), before, after
        )
    seat: int = entry["seat"]
    if entry.get("timeout") is True:
        return Step(index, "timeout", seat, None, None, before, after)
    return Step(index, "action", seat, copy.deepcopy(dict(entry["action"])), None, before, after)


def _apply_entry(state: State, entry: object, index: int, check_seed: bool) -> None:
    if not isinstance(entry, Mapping):
        raise RecordError("a log entry must be an object", "malformed-entry", index)
    try:
        if "chance" in entry:
            outcome = entry["chance"]
            if not isinstance(outcome, Mapping):
                raise RecordError("'chance' must be an object", "malformed-entry", index)
            if not state.chance_pending():
                raise RecordError("no roll or draw is due here", "unexpected-chance", index)
            if check_seed and dict(outcome) != state.sample_chance():
                raise RecordError(
                    f"outcome {dict(outcome)} is not the one the seed gives "
                    f"({state.sample_chance()})",
                    "outcome-not-from-seed",
                    index,
                )
            state.apply_chance(outcome)
            return
        seat = _field(entry, "seat", int, index)
        if state.chance_pending():
            raise RecordError(
                "a roll or draw is due here; write it as a 'chance' entry", "chance-missing", index
            )
        if entry.get("timeout") is True:
            state._check_actor(seat)
            state.apply_timeout(seat)
        elif "action" in entry:
            state.apply_action(seat, entry["action"])
        else:
            raise RecordError(
                "an entry holds 'chance', or 'seat' with 'action' or 'timeout'",
                "malformed-entry",
                index,
            )
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError(exc.message, exc.rule, index) from None
