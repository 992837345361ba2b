"""The strong Qwirkle bot's view of tiles: how well the tiles kept fit together, which
tiles it cannot see, what a placement leaves in the hand, what to keep on a swap."""

from __future__ import annotations

from collections.abc import Sequence

from ..qwirkle.board import COPIES, KINDS, Board

PAIR_CHANCE = 10 / 35
"""Chance that two random tiles could share a line (same colour or shape, not equal)."""


def synergy(hand: Sequence[int]) -> float:
    """Pairs of kept tiles that could share a line, minus duplicates, above what as many
    random tiles would give (so keeping more tiles is not a merit in itself)."""
    n = len(hand)
    total = -PAIR_CHANCE * n * (n - 1) / 2
    for i in range(n):
        a = hand[i]
        for j in range(i + 1, n):
            b = hand[j]
            if a == b:
                total -= 1.0
            elif a // 6 == b // 6 or a % 6 == b % 6:
                total += 1.0
    return total


def unseen_counts(board: Board, hand: Sequence[int]) -> list[int]:
    """Per kind, the copies this seat cannot see (in the bag or in other hands)."""
    counts = [COPIES] * KINDS
    for code in board.cells.values():
        counts[code] -= 1
    for code in hand:
        counts[code] -= 1
    return [max(0, c) for c in counts]


def unseen_tiles(board: Board, hand: Sequence[int]) -> list[int]:
    """The tiles this seat cannot see, as one multiset."""
    counts = unseen_counts(board, hand)
    return [code for code in range(KINDS) for _ in range(counts[code])]


def remaining(hand: Sequence[int], tiles: Sequence[tuple[int, int, int]]) -> list[int]:
    rest = list(hand)
    for _, _, code in tiles:
        rest.remove(code)
    return rest


def best_group(hand: Sequence[int]) -> list[int]:
    """The tiles of the biggest colour or shape group (distinct tiles), to keep on a swap."""
    groups: list[list[int]] = []
    kinds = sorted(set(hand))
    for c in range(6):
        groups.append([t for t in kinds if t // 6 == c])
    for s in range(6):
        groups.append([t for t in kinds if t % 6 == s])
    return max(groups, key=len)
