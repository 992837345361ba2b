// "My games" (#/games): this browser's player's finished games, newest first, a page at a
// time (the API's `next` cursor), each with a link to its replay.

import { h, replace } from './dom.js';
import { ApiError, getJSON, ordinal, pageSize, problemNotice, rating, when } from './api.js';
import * as GAMES from './games/index.js';
import * as store from './store.js';

const PAGE = 20;
const COLUMNS = [
  ['Game', ''],
  ['Finished', ''],
  ['Place', ''],
  ['Score', 'num'],
  ['Rating', ''],
  ['Replay', 'actions'],
];

/** The game's name as a row shows it: its ladder's title ("Qwixx (official)") when rated. */
export function gameTitle(game, ladder, ladders) {
  const found = ladder && ladders.find((l) => l.ladder === ladder);
  return found ? found.title : GAMES[game]?.TITLE || game;
}

/** "0.0 → 3.4 (+3.4)", or "not rated". */
export function ratingChange(before, after) {
  if (before === null || after === null) return h('span.unrated', null, 'not rated');
  const diff = after - before;
  const sign = diff > 0.05 ? 'up' : diff < -0.05 ? 'down' : 'same';
  const delta = `${diff >= 0 ? '+' : '\u2212'}${rating(Math.abs(diff))}`;
  return h(
    'span.rating-change',
    { class: sign },
    h('span', { 'aria-hidden': 'true' }, `${rating(before)} \u2192 ${rating(after)}`),
    h('span.sr', null, `from ${rating(before)} to ${rating(after)}, `),
    ' ', // (where a narrow table may break the line)
    h('span.delta', null, `(${delta})`),
  );
}

export class MyGamesView {
  constructor(app, query) {
    this.app = app;
    this.limit = pageSize(query, PAGE);
    this.player = undefined; // the player the list is of (undefined: not asked yet)
    this.games = [];
    this.next = null; // the cursor of the next page
    this.loaded = false;
    this.loading = false;
    this.problem = null; // an ApiError, or a sentence
    this.destroyed = false;
    this.root = h('section.history-page', { id: 'my-games', 'aria-labelledby': 'my-games-title' });
  }

  mount(root) {
    replace(root, this.root);
    this.render();
  }

  destroy() {
    this.destroyed = true;
  }

  /** After every hello: the player is known (or known not to be) from here on. */
  async sync() {
    const player = this.app.playerId();
    if (player === this.player && this.loaded) return; // a reconnect: nothing new to show
    this.player = player;
    this.games = [];
    this.next = null;
    this.loaded = false;
    await this.load(null);
  }

  async load(before) {
    if (this.loading) return;
    this.loading = true;
    this.problem = null;
    this.render();
    try {
      this.ladders = await this.app.ladders();
      if (!this.player) {
        this.problem = (await this.app.historyKept())
          ? 'This server gives out no player identities right now, so it cannot tell which games are yours: try again later.'
          : new ApiError(404, 'no history');
      } else {
        const query = new URLSearchParams({ limit: String(this.limit) });
        if (before) query.set('before', before);
        const page = await getJSON(
          `/api/players/${encodeURIComponent(this.player)}/games?${query}`,
          store.getKey(), // (its private rooms' games are listed to the player alone)
        );
        this.games = before ? [...this.games, ...page.games] : page.games;
        this.next = page.next;
        this.loaded = true;
      }
    } catch (err) {
      this.problem = err instanceof ApiError ? err : new ApiError(0, String(err));
    } finally {
      this.loading = false;
    }
    if (!this.destroyed) this.render();
  }

  render() {
    const root = this.root;
    root.dataset.loaded = this.loaded ? '1' : '0';
    root.dataset.loading = this.loading ? '1' : '0';
    root.setAttribute('aria-busy', String(this.loading));
    const head = [
      h('h1', { id: 'my-games-title' }, 'My games'),
      h(
        'p.small',
        null,
        'Your finished games on this server, newest first. This browser is your player here, whatever name you play under.',
      ),
    ];
    if (this.problem && !this.games.length) {
      const retry = () => this.load(null);
      replace(root, ...head, problemNotice(this.problem, retry));
      return;
    }
    if (!this.loaded) {
      replace(root, ...head, h('p.loading', null, 'Loading your games…'));
      return;
    }
    if (!this.games.length) {
      replace(
        root,
        ...head,
        h(
          'div.notice.empty',
          { role: 'status' },
          h('p', null, 'No finished games yet. Play one: it shows up here when it ends.'),
          h('a.btn.primary', { href: '#/' }, 'To the lobby'),
        ),
      );
      return;
    }
    replace(
      root,
      ...head,
      h('div.table-wrap.history-wrap', null, this.table()),
      this.problem ? problemNotice(this.problem, () => this.load(this.next)) : null,
      this.next
        ? h(
            'div.button-row',
            null,
            h(
              'button.btn',
              {
                type: 'button',
                id: 'more-games',
                dataset: { key: 'more' },
                onclick: () => this.load(this.next),
              },
              this.loading ? 'Loading…' : 'More',
            ),
          )
        : h('p.small.list-end', null, 'That is all of them.'),
    );
  }

  table() {
    const rows = this.games.map((g) =>
      h(
        'tr',
        { role: 'row', dataset: { gameId: g.game_id } },
        h(
          'td.game',
          { role: 'cell', dataset: { label: 'Game' } },
          g.ladder
            ? h(
                'a',
                { href: `#/leaderboards/${g.ladder}`, title: 'its leaderboard' },
                gameTitle(g.game, g.ladder, this.ladders),
              )
            : gameTitle(g.game, null, this.ladders),
        ),
        h('td.when', { role: 'cell', dataset: { label: 'Finished' } }, when(g.finished_at)),
        h(
          'td.place',
          {
            role: 'cell',
            dataset: { label: 'Place', place: String(g.place), seats: String(g.seats) },
          },
          `${ordinal(g.place)} of ${g.seats}`,
        ),
        h('td.num.score', { role: 'cell', dataset: { label: 'Score' } }, String(g.score)),
        h(
          'td.rating',
          { role: 'cell', dataset: { label: 'Rating' } },
          ratingChange(g.rating_before, g.rating_after),
        ),
        h(
          'td.actions',
          { role: 'cell' },
          h(
            'a.btn.small',
            {
              href: `#/games/${encodeURIComponent(g.game_id)}/replay`,
              dataset: { key: `replay-${g.game_id}` },
              'aria-label': `Replay the ${gameTitle(g.game, g.ladder, this.ladders)} game of ${when(g.finished_at)}`,
            },
            'Replay',
          ),
        ),
      ),
    );
    return h(
      'table.history.games-list',
      { id: 'my-games-table', role: 'table' },
      // (explicit roles: a phone shows the rows as cards, which would lose the table's)
      h(
        'thead',
        { role: 'rowgroup' },
        h(
          'tr',
          { role: 'row' },
          COLUMNS.map(([t, kind]) =>
            h('th', { scope: 'col', role: 'columnheader', class: kind }, t),
          ),
        ),
      ),
      h('tbody', { role: 'rowgroup' }, rows),
    );
  }
}
