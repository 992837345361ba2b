// The leaderboards (#/leaderboards/LADDER?offset=N): one ladder per game under its default
// rules and one per preset, 50 players a page, this browser's player's row marked and
// their rank shown even when it is on another page (from /api/players/ID).

import { h, replace } from './dom.js';
import { ApiError, getJSON, hashQuery, ordinal, pageSize, problemNotice, rating } from './api.js';
import { OFFICIAL, presetTitle } from './lobby.js';

const PAGE = 50;

export class LeaderboardView {
  constructor(app, ladder, query) {
    this.app = app;
    this.ladder = ladder; // null: the first one listed
    const offset = Number(hashQuery(query).offset);
    this.offset = Number.isInteger(offset) && offset >= 0 ? offset : 0;
    this.limit = pageSize(query, PAGE);
    this.ladders = null;
    this.board = null; // the page on screen (GET /api/leaderboards/LADDER)
    this.me = null; // this player's PlayerInfo (null: unknown, or no stored game)
    this.asked = 0; // the latest page asked for: an older answer is dropped
    this.loading = false;
    this.problem = null;
    this.destroyed = false;
    this.root = h('section.history-page.board-page', {
      id: 'leaderboard',
      'aria-labelledby': 'board-title',
    });
  }

  mount(root) {
    replace(root, this.root);
    this.render();
    this.start();
  }

  destroy() {
    this.destroyed = true;
  }

  /** After every hello: the player is known; their standings are asked for. */
  async sync() {
    const id = this.app.playerId();
    if (!id || (this.me && this.me.id === id)) return;
    try {
      this.me = await getJSON(`/api/players/${encodeURIComponent(id)}`);
    } catch {
      this.me = null; // (404: no stored game yet; the board says the rest)
    }
    if (!this.destroyed) this.render();
  }

  async start() {
    this.problem = null;
    try {
      this.ladders = await this.app.ladders();
    } catch (err) {
      this.problem = err instanceof ApiError ? err : new ApiError(0, String(err));
      this.render();
      return;
    }
    if (!this.ladders.some((l) => l.ladder === this.ladder)) {
      this.ladder = this.ladders.length ? this.ladders[0].ladder : null;
      this.offset = 0;
    }
    await this.load(this.offset);
  }

  /** Show the page from `offset`: the page on screen stays until it comes. */
  async load(offset) {
    if (!this.ladder) return;
    const asked = ++this.asked;
    this.loading = true;
    this.problem = null;
    this.offset = offset;
    this.keepUrl();
    this.render();
    let board = null;
    let problem = null;
    try {
      const query = new URLSearchParams({ offset: String(offset), limit: String(this.limit) });
      board = await getJSON(`/api/leaderboards/${encodeURIComponent(this.ladder)}?${query}`);
    } catch (err) {
      problem = err instanceof ApiError ? err : new ApiError(0, String(err));
    }
    if (asked !== this.asked || this.destroyed) return;
    this.loading = false;
    if (board) this.board = board;
    this.problem = problem;
    this.render();
  }

  choose(ladder) {
    this.ladder = ladder;
    this.board = null;
    this.load(0);
  }

  /** The address says what is shown (a reload or a shared link shows it again). */
  keepUrl() {
    const query = new URLSearchParams();
    if (this.offset) query.set('offset', String(this.offset));
    if (this.limit !== PAGE) query.set('limit', String(this.limit));
    const tail = query.toString() ? `?${query}` : '';
    history.replaceState(null, '', `#/leaderboards/${this.ladder}${tail}`);
  }

  /** This player's standing on the ladder shown, or null. */
  mine() {
    if (!this.me) return null;
    return this.me.ratings.find((r) => r.ladder === this.ladder) || null;
  }

  render() {
    const root = this.root;
    root.dataset.ladder = this.ladder || '';
    root.dataset.offset = String(this.offset);
    root.dataset.loading = this.loading ? '1' : '0';
    root.dataset.loaded = this.board ? '1' : '0';
    const head = h('h1', { id: 'board-title' }, 'Leaderboards');
    if (!this.ladders) {
      replace(
        root,
        head,
        this.problem
          ? problemNotice(this.problem, () => this.start())
          : h('p.loading', null, 'Loading…'),
      );
      return;
    }
    replace(
      root,
      head,
      this.picker(),
      h(
        'p.small',
        null,
        'Ratings (openskill) rise as the model grows sure of a player: the rating is \u03bc \u2212 3\u03c3, 0 to start. Games with house rules are not rated.',
      ),
      this.myRank(),
      this.problem
        ? problemNotice(this.problem, () => this.load(this.offset))
        : this.board
          ? this.table()
          : h('p.loading', null, 'Loading the standings…'),
    );
  }

  picker() {
    const games = [];
    for (const l of this.ladders) {
      let group = games.find((g) => g.game === l.game);
      if (!group) games.push((group = { game: l.game, title: l.title, ladders: [] }));
      if (l.preset === null) group.title = l.title;
      group.ladders.push(l);
    }
    const label = (l) => (l.preset === null ? 'dicehall defaults' : presetTitle(l.preset));
    const order = (a, b) => (b.preset === OFFICIAL) - (a.preset === OFFICIAL);
    return h(
      'div.field.board-picker',
      null,
      h('label', { for: 'lb-ladder' }, 'Game and rules'),
      h(
        'select',
        {
          id: 'lb-ladder',
          dataset: { key: 'lb-ladder' },
          onchange: (e) => this.choose(e.target.value),
        },
        games.map((g) =>
          h(
            'optgroup',
            { label: g.title },
            [...g.ladders]
              .sort(order)
              .map((l) =>
                h(
                  'option',
                  { value: l.ladder, selected: l.ladder === this.ladder },
                  `${g.title}: ${label(l)}`,
                ),
              ),
          ),
        ),
      ),
    );
  }

  myRank() {
    if (!this.app.playerId()) return null;
    const mine = this.mine();
    if (!mine) {
      return h(
        'p.my-rank',
        { id: 'lb-me' },
        'You have no rated game under these rules yet: play one and you are on the board.',
      );
    }
    const page = Math.floor((mine.rank - 1) / this.limit) * this.limit;
    const here = this.board && this.board.offset === page;
    return h(
      'p.my-rank',
      { id: 'lb-me', dataset: { rank: String(mine.rank) } },
      h('b', null, `You are ${ordinal(mine.rank)}`),
      ` \u00b7 rating ${rating(mine.rating)} \u00b7 ${mine.games} game${mine.games === 1 ? '' : 's'} `,
      here
        ? null
        : h(
            'button.btn.small',
            {
              type: 'button',
              id: 'lb-mine',
              dataset: { key: 'lb-mine' },
              onclick: () => this.load(page),
            },
            'Show my place',
          ),
    );
  }

  table() {
    const board = this.board;
    const me = this.app.playerId();
    if (!board.standings.length && board.offset === 0) {
      return h(
        'div.notice.empty',
        { role: 'status' },
        h('p', null, 'Nobody has played a rated game under these rules yet.'),
      );
    }
    const rows = board.standings.map((s) =>
      h(
        'tr',
        {
          class: s.player === me ? 'me' : '',
          'aria-current': s.player === me ? 'true' : null,
          dataset: { player: s.player, rank: String(s.rank) },
        },
        h('td.num.rank', { dataset: { label: 'Rank' } }, String(s.rank)),
        h(
          'td.name',
          { dataset: { label: 'Player' } },
          s.name,
          s.player.startsWith('house:') ? h('span.tag', null, 'house bot') : null,
          s.player === me ? h('span.tag.you', null, 'you') : null,
        ),
        h('td.num.rating', { dataset: { label: 'Rating' } }, rating(s.rating)),
        h('td.num.games', { dataset: { label: 'Games' } }, String(s.games)),
      ),
    );
    const first = board.offset + 1;
    const last = board.offset + board.standings.length;
    return h(
      'div.board-standings',
      { 'aria-busy': String(this.loading) },
      h(
        'div.table-wrap',
        null,
        h(
          'table.history.standings',
          { id: 'lb-table' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              [
                ['Rank', 'num rank'],
                ['Player', ''],
                ['Rating', 'num'],
                ['Games', 'num'],
              ].map(([t, kind]) => h('th', { scope: 'col', class: kind }, t)),
            ),
          ),
          h('tbody', null, rows),
        ),
      ),
      h(
        'nav.pager',
        { 'aria-label': 'pages of the leaderboard' },
        h(
          'button.btn.small',
          {
            type: 'button',
            id: 'lb-prev',
            disabled: board.offset === 0,
            dataset: { key: 'lb-prev' },
            onclick: () => this.load(Math.max(0, board.offset - this.limit)),
          },
          '\u2190 Previous',
        ),
        h(
          'span.pager-where',
          { id: 'lb-where' },
          board.standings.length ? `Ranks ${first}\u2013${last}` : 'No more players',
        ),
        h(
          'button.btn.small',
          {
            type: 'button',
            id: 'lb-next',
            disabled: board.next_offset === null,
            dataset: { key: 'lb-next' },
            onclick: () => this.load(board.next_offset),
          },
          'Next \u2192',
        ),
      ),
    );
  }
}
