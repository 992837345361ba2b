"""The one exception tree of rules/: every failure of a game engine is a RulesError."""

from __future__ import annotations


class RulesError(Exception):
    """Base of every error raised by rules/.

    `rule` is a short, stable, kebab-case name of the rule that was broken; clients and
    records quote it, so it never changes once published.
    """

    rule: str = "rules-error"

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        if rule is not None:
            self.rule = rule

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class IllegalAction(RulesError):
    """An action (or chance outcome) that the rules forbid now; the state is unchanged."""

    rule = "illegal-action"


class InvalidOptions(RulesError):
    """Unknown option, wrong type, value out of range, bad preset or seat count."""

    rule = "invalid-options"


class InvalidState(RulesError):
    """A serialized state or hand-made sheet that cannot be loaded."""

    rule = "invalid-state"


class UnknownGame(RulesError):
    """No game is registered under that name."""

    rule = "unknown-game"


class EndlessGame(RulesError):
    """A game played by `rules.play.play_out` did not end within its step limit (a bot or
    a chooser that never lets it end)."""

    rule = "endless-game"


class RecordError(RulesError):
    """A game record that does not replay; `index` is the offending log entry (or None)."""

    rule = "invalid-record"

    def __init__(self, message: str, rule: str | None = None, index: int | None = None) -> None:
        super().__init__(message, rule)
        self.index = index

    def __str__(self) -> str:
        where = "record" if self.index is None else f"log entry {self.index}"
        return f"{where}: {self.message} [{self.rule}]"
