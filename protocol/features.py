"""Optional v1 features (docs/protocol.md, Versioning): named in `welcome`, asked for in
`hello`, on for the connection once the `hello` reply lists them.

- `timestamps`: live room messages (`room`, `event`, `window`, `window_closed`,
  `game_over`) carry `sent_us`, the server's clock (unix microseconds) when it fanned the
  message out; a client measures delivery latency with it. One stamp per message, shared
  by every member that asked, so a message is still encoded once per view and encoding.
- `legal_without_view`: `legal` takes `view: false`, and its reply's `view` is then null.
  The view is most of what `legal` costs to build and to send; a bot that keeps its own
  picture of the game (or needs none: a random one) asks for the actions alone.
- `progress`: a `progress` message each time an answer to a shared window (Qwinto, Qwixx)
  comes in, listing the seats that have answered. Without it those answers show only when
  the window resolves (as `answered` events, before what resolved it); a table that shows
  who it is waiting for asks for it, a bot has no use for it.
- `legal_in_window`: a `window` message that names the member's seat carries that seat's
  legal actions (`legal`), and an `act` reply whose `owes` is not empty carries the
  actions it may take next; a bot answers each window with one message, no `legal`
  request. Asked for, because the lists cost the server to build and to send (a
  Qwirkle opening turn has hundreds of placements), and a client that shows the board
  (or keeps its own picture) needs none.
- `identity`: a player identity without sign-up. The `hello` reply carries `player` (a
  public `id` and a secret `key`, signed by the server); `hello` may then send that `key`
  again, on any later connection to any process, to be the same player (ratings, a
  player's games). Asked for, not on by default, because `hello.key` is a field an older
  server would refuse.
- `lobby_pages`: `rooms` takes `limit` and `cursor` and so walks the lobby a page at a
  time (every `rooms` reply is one page, of at most `MAX_ROOMS_PAGE` rooms, saying the
  `total` and the `next` cursor, with or without the feature). Asked for, because the two
  fields are ones an older server would refuse.
- `epochs`: `resume` may say the `epoch` of the room's history the client last processed
  (from its last `snapshot` or `resume` reply), so that a room a failover took back to an
  earlier point resumes with events wherever that is exact, and a snapshot only where the
  client saw messages that were lost (docs/protocol.md, "Epochs"). Without it a client is
  still never left with a lost message: it may get a snapshot where events would do.
  Asked for, because `resume.epoch` is a field an older server would refuse.
"""

from __future__ import annotations

from typing import Final

TIMESTAMPS: Final = "timestamps"
LEGAL_WITHOUT_VIEW: Final = "legal_without_view"
PROGRESS: Final = "progress"
IDENTITY: Final = "identity"
LEGAL_IN_WINDOW: Final = "legal_in_window"
LOBBY_PAGES: Final = "lobby_pages"
EPOCHS: Final = "epochs"

SERVER_FEATURES: Final = (
    TIMESTAMPS,
    LEGAL_WITHOUT_VIEW,
    PROGRESS,
    IDENTITY,
    LEGAL_IN_WINDOW,
    LOBBY_PAGES,
    EPOCHS,
)
"""What a v1 server offers, in `welcome.features` order."""


def accept(wanted: list[str]) -> list[str]:
    """The features a `hello` turns on: those asked for that the server offers, in order."""
    return [f for f in SERVER_FEATURES if f in wanted]
