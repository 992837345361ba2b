// The lobby: "Play now" per game, the games and their options, the open rooms, and the
// form to create a room (newgame.js).

import { h, replace, toast } from './dom.js';
import { Disconnected } from './dicehall.js';
import { NewGameForm, TURN_WINDOW } from './newgame.js';
import { defaultBot, defaultPreset, presetNames, presetTitle, valuesText } from './presets.js';
import * as store from './store.js';

// (what the room's page and the leaderboards take from here)
export { OFFICIAL, defaultBot, defaultPreset, presetTitle, resolveOptions } from './presets.js';

const ROOMS_EVERY_MS = 3000;

/** A person's seat whose connection is gone: quick match never seats anyone beside it,
 * where every turn would wait out the window for them (issue 33). */
const away = (s) => s.kind === 'human' && !s.connected;

/** A room whose seated people have all gone is not offered to join: nobody is there. */
const deserted = (r) =>
  r.seats.some((s) => s.kind === 'human') && r.seats.filter((s) => s.kind === 'human').every(away);

export class LobbyView {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.games = [];
    this.rooms = [];
    this.total = 0;
    this.form = null; // the new-game form, built once the games are known
    this.root = h('section.lobby', { id: 'lobby' });
    this.timer = null;
    this.quick = null; // the game a "Play now" is under way for
  }

  mount(root) {
    replace(root, this.root);
    this.render();
  }

  destroy() {
    clearTimeout(this.timer);
  }

  async sync() {
    try {
      this.games = await this.app.gameList();
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(err.message, 'error');
      return;
    }
    await this.loadRooms();
  }

  async loadRooms() {
    clearTimeout(this.timer);
    try {
      // One page (the server's first); `total` says how many there are in all.
      const result = await this.conn.request('rooms');
      this.rooms = result.rooms;
      this.total = result.total ?? result.rooms.length;
      this.render();
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(err.message, 'error');
    }
    this.timer = setTimeout(() => this.loadRooms(), ROOMS_EVERY_MS);
  }

  game(name) {
    return this.games.find((g) => g.name === name) || this.games[0];
  }

  /** The form's room: created, sat in and gone to, or said why not. */
  async create(game, spec) {
    try {
      await this.createRoom(game, spec);
    } catch (err) {
      if (!(err instanceof Disconnected))
        toast(`Could not create the room: ${err.message}`, 'error');
    }
  }

  /** Create a room (it starts by itself once full), take seat 1, seat the bots, go there. */
  async createRoom(game, spec) {
    const request = {
      game: game.name,
      seats: spec.seats,
      options: spec.options || {},
      turn_window: spec.turnWindow,
      public: spec.public,
      autostart: true,
    };
    if (spec.preset) request.preset = spec.preset;
    if (spec.name) request.name = spec.name;
    const created = await this.conn.request('create', request);
    const room = created.room.room;
    const name = this.app.playerName();
    const joined = await this.conn.request('join', { room, seat: 0, ...(name ? { name } : {}) });
    store.saveSeat(room, joined.seat, joined.token);
    this.app.seated.add(room);
    if (spec.bots > 0)
      await this.conn.request('add_bots', { room, kind: spec.botKind, count: spec.bots });
    location.hash = `#/room/${room}`;
    return room;
  }

  /** Sit down in `room` (the first open seat when `seat` is null) and go there. */
  async sit(room, seat) {
    const name = this.app.playerName();
    const joined = await this.conn.request('join', {
      room,
      ...(seat !== null ? { seat } : {}),
      ...(name ? { name } : {}),
    });
    store.saveSeat(room, joined.seat, joined.token);
    this.app.seated.add(room);
    location.hash = `#/room/${room}`;
  }

  async joinRoom(room, seat) {
    if (store.seatOf(room)) {
      location.hash = `#/room/${room}`; // this browser already holds a seat there
      return;
    }
    try {
      await this.sit(room, seat);
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(`Could not join: ${err.message}`, 'error');
    }
  }

  /**
   * Quick match: sit down in a public room of `name` that waits for players (one where
   * people wait first, then the one closest to full), or create one against the default
   * opponent with the default rules, which starts at once.
   */
  async playNow(name) {
    if (this.quick) return;
    const game = this.game(name);
    this.quick = name;
    this.render();
    try {
      const { rooms } = await this.conn.request('rooms', { game: name });
      const waiting = rooms
        .filter(
          (r) =>
            r.game === name &&
            r.status === 'open' &&
            r.seats.some((s) => s.kind === 'open') &&
            !r.seats.some(away) &&
            !store.seatOf(r.room),
        )
        .map((r) => ({
          room: r.room,
          people: r.seats.filter((s) => s.kind === 'human' && s.connected).length,
          open: r.seats.filter((s) => s.kind === 'open').length,
        }))
        .sort((a, b) => b.people - a.people || a.open - b.open);
      for (const r of waiting) {
        try {
          await this.sit(r.room, null);
          return;
        } catch (err) {
          // taken, started or gone meanwhile: try the next one
          if (!JOIN_RACES.has(err.name)) throw err;
        }
      }
      const preset = defaultPreset(game);
      await this.createRoom(game, {
        seats: Math.max(2, game.min_seats),
        bots: Math.max(2, game.min_seats) - 1,
        botKind: defaultBot(game),
        preset: preset || null,
        options: {},
        turnWindow: TURN_WINDOW,
        public: true,
        name: `${game.title}: quick match`,
      });
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(`Could not start a game: ${err.message}`, 'error');
    } finally {
      this.quick = null;
      this.render();
    }
  }

  render() {
    if (!this.games.length) {
      this.form = null;
      replace(this.root, h('p.loading', null, 'Connecting…'));
      return;
    }
    if (!this.form) {
      this.form = new NewGameForm(this.games, (game, spec) => this.create(game, spec));
      this.quickSlot = h('div.quick-slot');
      this.side = h('div.lobby-side');
      replace(this.root, h('div.lobby-main', null, this.quickSlot, this.form.el), this.side);
    }
    // the form is never redrawn (issue 33: it would take what is being typed there), only
    // what is around it: the quick match buttons and the rooms, refreshed every 3 s
    replace(this.quickSlot, this.quickMatch());
    replace(this.side, this.myRooms(), this.roomList(), this.gameList());
  }

  quickMatch() {
    return h(
      'section.card.quick',
      { 'aria-labelledby': 'quick-title' },
      h('h2', { id: 'quick-title' }, 'Play now'),
      h(
        'p.small',
        null,
        'Sit down in a room that waits for players, or start a game against the strong house bot.',
      ),
      h(
        'div.quick-games',
        null,
        this.games.map((g) =>
          h(
            'button.btn.primary',
            {
              type: 'button',
              disabled: this.quick !== null,
              'aria-label': `Play ${g.title} now`,
              dataset: { key: `play-${g.name}`, playNow: g.name },
              onclick: () => this.playNow(g.name),
            },
            this.quick === g.name ? `${g.title}…` : g.title,
          ),
        ),
      ),
    );
  }

  myRooms() {
    const mine = store.seats();
    const rooms = Object.keys(mine).sort((a, b) => mine[b].at - mine[a].at);
    if (!rooms.length) return null;
    return h(
      'section.card',
      { 'aria-labelledby': 'mine-title' },
      h('h2', { id: 'mine-title' }, 'Your seats'),
      h(
        'ul.plain',
        null,
        rooms.map((r) =>
          h(
            'li',
            null,
            h('a', { href: `#/room/${r}` }, `Room ${r}`),
            ` · seat ${mine[r].seat + 1}`,
          ),
        ),
      ),
    );
  }

  roomList() {
    // explicit roles: a narrow screen shows each room as a card, which loses the table's
    const cell = (kind, label, ...content) =>
      h(`td.${kind}`, { role: 'cell', dataset: { label } }, ...content);
    const rows = this.rooms.map((r) => {
      const open = r.seats.filter((s) => s.kind === 'open');
      return h(
        'tr',
        { role: 'row', dataset: { room: r.room } },
        cell(
          'room-name',
          'Room',
          h('a', { href: `#/room/${r.room}`, dataset: { key: `open-${r.room}` } }, r.name),
        ),
        cell('room-game', 'Game', this.title(r.game)),
        cell('room-options', 'Options', optionsText(r.options)),
        cell('room-status', 'Status', r.status),
        cell('room-seats', 'Seats', seatNames(r.seats)),
        cell('room-turn', 'Turn', `${r.turn_window} s`),
        h(
          'td.actions',
          { role: 'cell' },
          store.seatOf(r.room)
            ? h('a.btn.small.primary', { href: `#/room/${r.room}` }, 'Your seat')
            : open.length && r.status !== 'over' && !deserted(r)
              ? h(
                  'button.btn.small',
                  {
                    type: 'button',
                    dataset: { key: `join-${r.room}` },
                    onclick: () => this.joinRoom(r.room, open[0].seat),
                  },
                  'Join',
                )
              : null,
          h(
            'a.btn.small',
            { href: `#/room/${r.room}`, dataset: { key: `watch-${r.room}` } },
            'Watch',
          ),
        ),
      );
    });
    return h(
      'section.card.rooms-card',
      { 'aria-labelledby': 'rooms-title' },
      h('h2', { id: 'rooms-title' }, 'Open rooms'),
      rows.length
        ? h(
            'div.table-wrap',
            null,
            h(
              'table.rooms',
              { role: 'table' },
              h(
                'thead',
                { role: 'rowgroup' },
                h(
                  'tr',
                  { role: 'row' },
                  ['Room', 'Game', 'Options', 'Status', 'Seats', 'Turn', ''].map((t) =>
                    h('th', { scope: 'col', role: 'columnheader' }, t),
                  ),
                ),
              ),
              h('tbody', { role: 'rowgroup' }, rows),
            ),
          )
        : h('p', null, 'No public rooms right now: create one.'),
      this.total > this.rooms.length
        ? h('p.small', null, `${this.rooms.length} of ${this.total} rooms shown.`)
        : null,
    );
  }

  title(name) {
    const g = this.games.find((x) => x.name === name);
    return g ? g.title : name;
  }

  gameList() {
    return h(
      'section.card',
      { 'aria-labelledby': 'games-title' },
      h('h2', { id: 'games-title' }, 'Games'),
      h(
        'dl.games',
        null,
        this.games.map((g) => [
          h('dt', null, g.title, h('span.small', null, ` · ${g.min_seats}–${g.max_seats} seats`)),
          h(
            'dd',
            null,
            g.options.length
              ? h(
                  'ul.plain',
                  null,
                  g.options.map((o) =>
                    h(
                      'li',
                      null,
                      h('code', null, o.name),
                      ` (default ${JSON.stringify(o.default)}): ${o.description || ''}`,
                    ),
                  ),
                )
              : h('span', null, 'No options.'),
            Object.keys(g.presets).length
              ? h(
                  'p.small',
                  null,
                  presetNames(g)
                    .map((n) => `${presetTitle(n)}: ${valuesText(g.presets[n])}`)
                    .join('; '),
                )
              : null,
          ),
        ]),
      ),
    );
  }
}

const JOIN_RACES = new Set(['seat-taken', 'already-started', 'no-such-room', 'already-in-room']);

/** Who sits where, each name whole on its line ("strong-bot-1" never split at a hyphen). */
function seatNames(seats) {
  return seats.map((s, i) => [
    i ? ', ' : '',
    h('span.who', null, s.kind === 'open' ? 'open' : s.name),
  ]);
}

function optionsText(options) {
  return Object.entries(options)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}
