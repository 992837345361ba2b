"""Rebuild the engines' plain data from a seat's view: what the bots compute on."""

from __future__ import annotations

from ..base import JSON
from ..qwinto.sheet import Sheet, rows_from_json
from ..qwirkle.board import Board, tile_code
from ..yamb.table import COLUMN_INDEX, EMPTY, NCELLS, NROWS, ROW_INDEX


def qwinto_sheet(view: JSON, seat: int) -> Sheet:
    return rows_from_json(view["sheets"][seat]["rows"])


def qwirkle_board(view: JSON) -> Board:
    return Board.from_tiles(
        (t["x"], t["y"], tile_code(t["color"], t["shape"])) for t in view["board"]
    )


def qwirkle_hand(view: JSON) -> list[int]:
    return [tile_code(t["color"], t["shape"]) for t in view["hand"] or ()]


def yamb_cells(view: JSON, seat: int) -> list[int]:
    """The flat 78-cell table (column-major, EMPTY for an unwritten cell)."""
    cells = [EMPTY] * NCELLS
    for cname, column in view["tables"][seat]["columns"].items():
        base = COLUMN_INDEX[cname] * NROWS
        for rname, value in column.items():
            cells[base + ROW_INDEX[rname]] = value
    return cells
