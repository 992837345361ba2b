"""What `dicehall play` draws: the sheets as typed, the dice, legends, scores, the log.

Pure functions of a seat's view and the room's events (docs/games/*.md), so each is tested
without a server. The sheets are the canonical texts of docs/rules.md (the game's
`render_view`); the terminal adds only what a player at a screen lacks: the numbers of the
Qwinto boxes under the player's own rows (the sheet itself has none, and `enter red 3`
names box 3), a legend for the signs the paper explains in its rules (`%`, the `U`/`L`
lock column), the dice as one line with their sum, and who is to act with the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dicehall.rules import get_game
from dicehall.rules.qwinto.sheet import BLOCKED, BOXES, OFFSET
from dicehall.rules.qwixx.sheet import COLOURS as QWIXX_ROWS

from .terminal_moves import describe, tile_text

View = Mapping[str, Any]

LEGENDS: dict[str, str] = {
    "qwinto": (
        "Legend: % edges a bonus box (when the three boxes of its column are filled it\n"
        "scores again); XX is blocked. The numbers under your rows are the boxes to type\n"
        "(`enter red 3`, or its number from the list: 13)."
    ),
    "qwixx": (
        "Legend: XX is a marked box. The last column is the lock: U open, L locked (that\n"
        "player marked the row's last box; a row anyone locks closes for everyone). Type\n"
        "a row and a number as printed (`mark red 7`)."
    ),
    "yamb": (
        "Legend: type a column and a row as labelled (`write free1 5`, `call full`); hold\n"
        "dice by position (`roll hold 0 2`). S1: rows 1..6, +30 from 60; S2: (max - min)\n"
        "x row 1; S3: kenta..royal."
    ),
    "qwirkle": (
        "Legend: a tile is colour + shape: R red, O orange, Y yellow, G green, B blue,\n"
        "P purple; c circle, s square, d diamond, t star, l clover, x cross; .. is empty.\n"
        "Place as `place Rt@3,0` (x across, y down)."
    ),
}


def legend(game: str) -> str | None:
    return LEGENDS.get(game)


def _qwinto_ruler(row: int) -> str:
    """The box numbers of a Qwinto row, each under its box (global column c starts at
    character 7 + 3c: a delimiter, then the box's two characters)."""
    start = 7 + 3 * OFFSET[row]
    boxes = "".join("   " if b == BLOCKED[row] else f" {b:2d}" for b in range(BOXES))
    return f"{'box':>{start - 1}} {boxes}".rstrip()


def with_box_numbers(qwinto_sheet: str) -> str:
    """A canonical Qwinto sheet with a line of box numbers under each of its three rows."""
    lines = qwinto_sheet.split("\n")
    rows = {2: 0, 4: 1, 6: 2}  # the red, yellow and blue lines of the canonical text
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in rows:
            out.append(_qwinto_ruler(rows[i]))
    return "\n".join(out)


def sheets(game: str, view: View, names: Sequence[str], seat: int | None) -> list[str]:
    """Every seat's sheet (Qwirkle: the others' hands are hidden, so a line each)."""
    render = get_game(game).render_view
    assert render is not None
    out = []
    for s in range(int(view.get("seats", len(names)))):
        name = names[s] if s < len(names) else f"seat {s}"
        if game == "qwirkle" and s != seat:
            hand = view.get("hand_sizes", [0] * (s + 1))[s]
            out.append(f"{name}: {view['scores'][s]} points, {hand} tiles in hand")
            continue
        text = render(view, s, name)
        if game == "qwinto" and s == seat and not view.get("over"):
            text = with_box_numbers(text)
        out.append(text)
    return out


def qwinto_dice(roll: Mapping[str, int]) -> str:
    parts = [f"{c} {roll[c]}" for c in ("red", "yellow", "blue") if c in roll]
    return " · ".join(parts) + f"  (sum {sum(roll.values())})"


def qwixx_dice(dice: Mapping[str, int]) -> str:
    whites = [dice[w] for w in ("white1", "white2") if w in dice]
    white = " · ".join(f"white {v}" for v in whites) + f" (white sum {sum(whites)})"
    return " · ".join([white, *(f"{c} {dice[c]}" for c in QWIXX_ROWS if c in dice)])


def yamb_dice(dice: Sequence[int], held: Sequence[int] = ()) -> str:
    """Each die after its position (what `roll hold` takes), `held` the ones kept."""
    marks = [f"{i}:{v}" + (" held" if i in held else "") for i, v in enumerate(dice)]
    return " · ".join(marks) + f"  (sum {sum(dice)})"


def dice_line(game: str, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
    """The dice on the table as one line with their sum, or None when none are rolled."""
    if game == "qwinto" and view.get("roll"):
        return "Dice: " + qwinto_dice(view["roll"])
    if game == "qwixx" and view.get("dice"):
        return "Dice: " + qwixx_dice(view["dice"])
    if game == "yamb" and seat is not None and "tables" in view:
        table = view["tables"][seat]
        if table.get("dice"):
            return f"Dice (roll {table.get('rolls')} of 3): " + yamb_dice(table["dice"], held)
    return None


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


def rolled_text(dice: object, roll: object = None) -> str:
    """A `rolled` event's dice, whichever game rolled them (Yamb's say which `roll`)."""
    if isinstance(dice, Mapping) and "white1" in dice:
        return qwixx_dice(dice)
    if isinstance(dice, Mapping):
        return qwinto_dice(dice)
    if isinstance(dice, list):
        of = f"; roll {roll} of 3" if roll is not None else ""
        return " ".join(str(d) for d in dice) + f"  (sum {sum(dice)}{of})"
    return str(dice)


def played_text(event: Mapping[str, Any]) -> str:
    """An `applied` event's move with what it gave: `write up 3 = 9`, `place ... (+6)`."""
    text = describe(event["action"])
    if "value" in event:
        text += f" = {event['value']}"
    if "points" in event:
        text += f" (+{event['points']}" + (", a Qwirkle)" if event.get("qwirkles") else ")")
    return text


def event_text(event: Mapping[str, Any], name: Callable[[int], str]) -> str | None:
    """One line of the log for a game event; None for those another message tells."""
    kind = event.get("type")
    seat = event.get("seat")
    who = name(seat) if isinstance(seat, int) else ""
    if kind in ("timeout", "game_over"):
        return None  # `window_closed` names the time-outs, `game_over` the scores
    if kind == "applied" and isinstance(event.get("action"), dict):
        return f"{who}: {played_text(event)}"
    if kind == "rolled":
        return (
            f"{who + ' ' if who else ''}rolled {rolled_text(event.get('dice'), event.get('roll'))}"
        )
    return _other_event(kind, who, event)


def _other_event(kind: object, who: str, event: Mapping[str, Any]) -> str:
    if kind == "answered":
        return f"{who} answered"
    if kind == "failed_throw":
        return f"{who} records a failed throw"
    if kind == "turn":
        return f"{who}'s turn"
    if kind == "locked":
        return f"{who} locked {event.get('row')}"
    if kind == "row_closed":
        return f"the {event.get('row')} row is closed for everyone; its die leaves the game"
    if kind == "round":
        return f"round {event.get('round')}"
    if kind == "start":
        return f"{who} starts: a first line of {event.get('size')} tiles"
    if kind == "bonus":
        return f"{who} emptied the hand: +{event.get('points')}"
    if kind == "drew" and isinstance(event.get("tiles"), list):
        tiles = " ".join(tile_text(t) for t in event["tiles"])
        return f"{who} drew {tiles}; {event.get('bag')} left in the bag"
    if kind == "drew":
        return f"{who} drew {event.get('count')} tiles; {event.get('bag')} left in the bag"
    rest = {k: v for k, v in event.items() if k not in ("type", "seat")}
    return f"{kind} {who} {rest if rest else ''}".strip()
