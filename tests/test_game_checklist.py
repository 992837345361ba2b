"""What a game needs besides its engine, checked for every registered game.

docs/contributing.md, "Adding a game", lists these; a new game registered in rules/ fails
here until it has them all: its pages (docs/games/NAME.md, a section in docs/rules.md),
bots of every kind, a view in the web client, a presentation for the terminal, and
an action schema that carries every action it takes, each field named on its page.
The engine itself is checked by tests/rules/test_conformance.py.
"""

from __future__ import annotations

import re
from random import Random

import msgspec
import pytest

from dicehall.protocol.messages.common import Action
from dicehall.rules import JSON, State, all_games, get_game, wire_action
from dicehall.rules.actions import action_fields
from dicehall.rules.bots import get_bot
from dicehall.rules.play import play_out, random_chooser
from dicehall.rules.text import DEFAULT
from tests.support.servers import ROOT

GAMES = [g.name for g in all_games()]


@pytest.mark.parametrize("name", GAMES)
def test_it_has_its_page_naming_every_option(name: str) -> None:
    page = ROOT / "docs" / "games" / f"{name}.md"
    assert page.is_file(), f"write {page.relative_to(ROOT)}: the game's reference"
    text = page.read_text(encoding="utf-8")
    for option in get_game(name).options:
        assert f"`{option.name}`" in text, f"{page.name} does not describe `{option.name}`"


@pytest.mark.parametrize("name", GAMES)
def test_it_has_a_section_in_the_rules_reading(name: str) -> None:
    title = get_game(name).title
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {title}$", text, flags=re.MULTILINE), f"docs/rules.md: ## {title}"


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("kind", ["random", "greedy", "strong"])
def test_it_has_every_kind_of_bot(name: str, kind: str) -> None:
    bot = get_bot(kind, name, seed=1)
    state = get_game(name).new_state(get_game(name).min_seats, {}, bytes(32))
    while state.chance_pending():
        state.resolve_chance()
    seat = state.actors()[0]
    legal = state.legal_actions(seat)
    assert bot.decide(state.view(seat), legal) in legal


@pytest.mark.parametrize("name", GAMES)
def test_the_web_client_draws_it(name: str) -> None:
    view = ROOT / "clients" / "web" / "js" / "games" / f"{name}.js"
    assert view.is_file(), f"write {view.relative_to(ROOT)}: render(ctx) for the page"
    text = view.read_text(encoding="utf-8")
    title = get_game(name).title
    want = f"export const TITLE = '{title}';"
    assert want in text, f"{view.name}: {want} (the lobby-less pages' title)"
    index = (ROOT / "clients" / "web" / "js" / "games" / "index.js").read_text(encoding="utf-8")
    line = f"export * as {name} from './{name}.js';"
    assert line in index, f"list the view in clients/web/js/games/index.js: {line}"


@pytest.mark.parametrize("name", GAMES)
def test_it_has_its_terminal_presentation(name: str) -> None:
    text = ROOT / "rules" / name / "text.py"
    assert text.is_file(), f"write {text.relative_to(ROOT)}: the game's Presentation"
    assert get_game(name).text is not DEFAULT, f"Game(..., text=TEXT) in rules/{name}/__init__.py"


@pytest.mark.parametrize("name", GAMES)
def test_the_wire_carries_every_action_it_takes(name: str) -> None:
    """Every legal action of a whole game decodes as the protocol's `Action`, passes the
    game's own schema (`Game.actions`, which the server checks every `act` against) and
    comes back unchanged: a field the schema does not know would be refused on the wire."""
    game = get_game(name)
    state = game.new_state(max(2, game.min_seats), {}, bytes(32))
    rng = Random(name)
    choose = random_chooser(rng)
    seen: set[str] = set()

    def carry(state: State, seat: int) -> JSON | None:
        for action in state.legal_actions(seat):
            wire = msgspec.json.decode(msgspec.json.encode(action), type=Action)
            assert wire_action(game.actions, wire) == action, f"{action} does not survive"
            seen.add(action["type"])
        return choose(state, seat)

    play_out(state, carry)
    assert seen, "no action was ever legal"


@pytest.mark.parametrize("name", GAMES)
def test_its_page_names_every_field_of_its_actions(name: str) -> None:
    """A bot in another language learns a game's action fields from its page: the
    protocol's schema says only that an action is a map with a `type`."""
    page = ROOT / "docs" / "games" / f"{name}.md"
    text = page.read_text(encoding="utf-8")
    missing = [f for f in action_fields(get_game(name).actions) if f"`{f}`" not in text]
    assert not missing, f"{page.name} does not name the action fields {missing}"
