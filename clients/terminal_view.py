"""What `dicehall play` draws: the sheets as typed, the dice, legends, scores, the log.

Pure functions of a seat's view and the room's events (docs/games/*.md), so each is tested
without a server. The sheets are the canonical texts of docs/rules.md (the game's
`render_view`); what the terminal adds for a player at a screen (box numbers to type, a
legend for the signs the paper explains in its rules, the dice as one line with their sum)
is each game's presentation (rules/NAME/text.py); here are only the words every game
shares: who is to act with the scores, and the log's sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dicehall.rules import get_game, presentation

from .terminal_moves import describe

View = Mapping[str, Any]


def legend(game: str) -> str | None:
    return presentation(game).legend


def sheets(game: str, view: View, names: Sequence[str], seat: int | None) -> list[str]:
    """Every seat's sheet, as the game's presentation draws them."""
    render = get_game(game).render_view
    assert render is not None
    return presentation(game).sheets(view, names, seat, render)


def dice_line(game: str, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
    """The dice on the table as one line with their sum, or None when none are rolled."""
    return presentation(game).dice_line(view, seat, held)


def status_line(
    window: int, actors: Sequence[int], view: View, names: Sequence[str], seat: int | None
) -> str:
    """`* turn window 7: Ann's turn; to act: Ann (you), Bo · scores: Ann 12 · Bo 7`."""

    def name(s: int) -> str:
        text = names[s] if 0 <= s < len(names) else f"seat {s}"
        return text + (" (you)" if s == seat else "")

    text = f"* turn window {window}: "
    turn = view.get("active", view.get("turn"))
    if view.get("window") == window and isinstance(turn, int):
        text += "your turn; " if turn == seat else f"{name(turn)}'s turn; "
    text += "to act: " + (", ".join(name(a) for a in actors) or "nobody")
    scores = view.get("scores")
    if isinstance(scores, list) and scores and len(scores) <= len(names):
        text += " · scores: " + " · ".join(f"{names[s]} {p}" for s, p in enumerate(scores))
    return text


def played_text(game: str, event: Mapping[str, Any]) -> str:
    """An `applied` event's move with what it gave: `write up 3 = 9`, `place ... (+6)`."""
    text = describe(game, event["action"])
    if "value" in event:
        text += f" = {event['value']}"
    if "points" in event:
        text += f" (+{event['points']}" + (", a Qwirkle)" if event.get("qwirkles") else ")")
    return text


def event_text(game: str, event: Mapping[str, Any], name: Callable[[int], str]) -> str | None:
    """One line of the log for a game event; None for those another message tells."""
    kind = event.get("type")
    seat = event.get("seat")
    who = name(seat) if isinstance(seat, int) else ""
    if kind in ("timeout", "game_over"):
        return None  # `window_closed` names the time-outs, `game_over` the scores
    if kind == "applied" and isinstance(event.get("action"), dict):
        return f"{who}: {played_text(game, event)}"
    if kind == "rolled":
        dice = presentation(game).rolled_text(event.get("dice"), event.get("roll"))
        return f"{who + ' ' if who else ''}rolled {dice}"
    own = presentation(game).event_text(event, who)
    return own if own is not None else _other_event(kind, who, event)


def _other_event(kind: object, who: str, event: Mapping[str, Any]) -> str:
    if kind == "answered":
        return f"{who} answered"
    if kind == "failed_throw":
        return f"{who} records a failed throw"
    if kind == "turn":
        return f"{who}'s turn"
    if kind == "round":
        return f"round {event.get('round')}"
    rest = {k: v for k, v in event.items() if k not in ("type", "seat")}
    return f"{kind} {who} {rest if rest else ''}".strip()
