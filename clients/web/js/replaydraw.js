// The drawing of a stored game at one step of its replay: the header, the step in words,
// the sheets or board (by the live page's own game views, every seat as a spectator sees
// them), the results at the end and the record's card (seed, commitment, download). Apart
// from replay.js, which loads the steps and steps through them, so that each does one job:
// these are plain functions of what they are handed, with no state and no fetching.
//
// What they are handed (`at`): the stored game (`game`, GET /api/games/ID), its `gameId` and
// API `path`, the `ladders`, the step answer on screen (`step`), the number of steps
// (`total`), the seed check (`seedCheck`: true/false/null), the player's id (`me`), the game
// view's own state (`local`) and how to draw it all again (`rerender`).

import { h } from './dom.js';
import { ordinal, when } from './api.js';
import { describeDelta, describeEntry, describeMessage } from './describe.js';
import { gameTitle, ratingChange } from './mygames.js';
import * as GAMES from './games/index.js';

/** The player's seat in the stored game, or null (not theirs, or no player yet). */
function mine(at) {
  const seat = at.me ? at.game.seats.find((s) => s.player === at.me) : null;
  return seat ? seat.seat : null;
}

/** The head: the game's title and when it finished, links to My games and its leaderboard. */
export function drawHead(at) {
  const game = at.game;
  const title = gameTitle(game.game, game.ladder, at.ladders);
  return [
    h(
      'div.room-title',
      null,
      h('h1', null, `Replay: ${title}`),
      h('span.tag', null, when(game.finished_at)),
      game.ladder ? h('span.tag', null, 'rated') : h('span.tag', null, 'not rated'),
    ),
    h(
      'div.button-row.replay-links',
      null,
      h('a.btn.small', { href: '#/games', dataset: { key: 'my-games' } }, 'My games'),
      game.ladder
        ? h(
            'a.btn.small',
            { href: `#/leaderboards/${game.ladder}`, dataset: { key: 'board' } },
            'Leaderboard',
          )
        : null,
    ),
  ];
}

/** The step in words: the log entry it replays, what it changed, the winners at the end. */
export function drawNow(at) {
  const step = at.step;
  const names = step.names;
  const nameOf = (s) => names[s] ?? `Seat ${s + 1}`;
  const lines = [];
  if (!step.entry) {
    lines.push(
      h(
        'p.replay-entry',
        { id: 'replay-entry' },
        'The start: nothing has happened yet. Step on with Next or the \u2192 key.',
      ),
    );
  } else {
    const text = describeEntry(at.game.game, step.entry, step.views, nameOf);
    lines.push(
      h('p.replay-entry', { id: 'replay-entry', dataset: { kind: step.entry.kind } }, text),
    );
    const delta = describeDelta(step.entry, names);
    if (delta) lines.push(h('p.replay-delta', null, delta));
  }
  if (step.over) {
    const winners = at.game.seats.filter((s) => s.place === 1).map((s) => s.seat);
    lines.push(h('p.replay-over', null, describeMessage({ type: 'game_over', winners }, nameOf)));
  }
  return lines;
}

/** The body: every seat's sheet (or the board), the results at the end, the record's card. */
export function drawBody(at) {
  const step = at.step;
  const game = at.game.game;
  const view = GAMES[game];
  const seat = mine(at);
  const names = step.names.map((n, s) => (s === seat ? `${n} (you)` : n));
  const over = step.over ? results(at, seat) : null;
  if (!view) {
    // no drawing of this game here: its canonical sheets, as text
    return [
      h(
        'div.play',
        null,
        over,
        h(
          'div.others.replay-sheets',
          { 'aria-label': 'sheets' },
          step.sheets.map((text, s) =>
            h(
              'section.seat-panel',
              { dataset: { seat: String(s) }, 'aria-label': `${names[s]}: sheet` },
              h(
                'header.seat-head',
                null,
                h('span.seat-name', null, names[s]),
                h(
                  'span.seat-score',
                  { dataset: { scoreSeat: String(s) } },
                  `${step.scores[s]} pts`,
                ),
              ),
              h('pre.sheet-text', null, text),
            ),
          ),
        ),
      ),
      h('aside.side', null, facts(at)),
    ];
  }
  const ctx = {
    view: step.views[0],
    actions: [],
    seat: null, // every seat drawn alike, as a spectator sees them
    names,
    info: { game, seats: names.map((name, seat) => ({ seat, name, kind: 'human' })) },
    local: at.local,
    act: () => {},
    rerender: at.rerender,
  };
  const { main, others } = view.render(ctx);
  const shown = view.replayHands ? view.replayHands(step, names) : null;
  return [
    h(
      'div.play',
      { class: `game-${game}` },
      over,
      main,
      others.length || shown
        ? h('div.others.replay-sheets', { 'aria-label': 'every seat' }, others, shown)
        : null,
    ),
    h('aside.side', null, facts(at)),
  ];
}

/** The end: the stored results (place, score, rating change); `seat` is the player's. */
function results(at, seat) {
  const rows = at.game.seats.map((s) =>
    h(
      'tr',
      { class: s.place === 1 ? 'winner' : '' },
      h('td', null, at.step.names[s.seat] ?? s.name, s.seat === seat ? ' (you)' : ''),
      h('td', null, ordinal(s.place)),
      h('td.num', { dataset: { finalSeat: String(s.seat) } }, String(s.score)),
      h('td', null, ratingChange(s.rating_before, s.rating_after)),
    ),
  );
  return h(
    'section.game-over',
    { 'aria-label': 'game over' },
    h('h2', null, 'Game over'),
    h(
      'div.table-wrap',
      null,
      h(
        'table.final',
        null,
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Player', 'Place', 'Score', 'Rating'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h('tbody', null, rows),
      ),
    ),
  );
}

/** The record to check: its seed (revealed), the commitment and the download. */
function facts(at) {
  const record = at.game.record;
  const check =
    at.seedCheck === true
      ? h(
          'p.seed-check.ok',
          null,
          '\u2713 Its SHA-256 is the commitment: the dice were fixed before the game.',
        )
      : at.seedCheck === false
        ? h('p.seed-check.bad', null, '\u2717 Its SHA-256 is not the commitment!')
        : null;
  return h(
    'section.card.replay-facts',
    { 'aria-labelledby': 'facts-title' },
    h('h2', { id: 'facts-title' }, 'The record'),
    h(
      'p.small',
      null,
      `${record.seats.length} seats, ${at.total} steps, finished ${when(at.game.finished_at)}.`,
    ),
    record.seed
      ? [
          h('p.small', null, 'Dice seed, revealed now that the game is over:'),
          h('p', null, h('code', { id: 'replay-seed' }, record.seed)),
          h('p.small', null, 'Commitment, published before the first roll:'),
          h('p', null, h('code', null, record.commitment)),
          check,
        ]
      : h('p.small', null, 'This record carries no seed.'),
    h(
      'div.button-row',
      null,
      h(
        'a.btn.small',
        {
          href: at.path,
          download: `dicehall-${at.gameId}.json`,
          id: 'replay-record',
          dataset: { key: 'record' },
        },
        'Download the record',
      ),
    ),
    h(
      'p.small',
      null,
      'Check it yourself: ',
      h('code', null, `dicehall replay dicehall-${at.gameId}.json`),
      ' replays it and checks every roll against the seed.',
    ),
    h('p.small.keys', null, 'Keys: \u2190 and \u2192 step back and on.'),
  );
}
