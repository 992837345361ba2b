// The lobby: the games and their options, the open rooms, and a form to create a room.

import { h, replace, toast } from './dom.js';
import { Disconnected } from './dicehall.js';
import * as store from './store.js';

const ROOMS_EVERY_MS = 3000;

export class LobbyView {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.games = [];
    this.rooms = [];
    this.form = {
      game: 'qwinto',
      seats: 2,
      bots: 1,
      turn_window: 30,
      preset: '',
      options: {},
      name: '',
      public: true,
    };
    this.root = h('section.lobby', { id: 'lobby' });
    this.timer = null;
    this.creating = false;
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
      const result = await this.conn.request('games');
      this.games = result.games;
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(err.message, 'error');
      return;
    }
    await this.loadRooms();
  }

  async loadRooms() {
    clearTimeout(this.timer);
    try {
      const result = await this.conn.request('rooms');
      this.rooms = result.rooms;
      this.render();
    } catch (err) {
      if (!(err instanceof Disconnected)) toast(err.message, 'error');
    }
    this.timer = setTimeout(() => this.loadRooms(), ROOMS_EVERY_MS);
  }

  game() {
    return this.games.find((g) => g.name === this.form.game) || this.games[0];
  }

  async create(e) {
    e.preventDefault();
    if (this.creating) return;
    const game = this.game();
    const f = this.form;
    const seats = clamp(Number(f.seats), game.min_seats, game.max_seats);
    const bots = clamp(Number(f.bots), 0, seats - 1);
    const request = {
      game: game.name,
      seats,
      options: f.options,
      turn_window: clamp(Number(f.turn_window), 1, 3600),
      public: f.public,
      autostart: true,
    };
    if (f.preset) request.preset = f.preset;
    if (f.name.trim()) request.name = f.name.trim().slice(0, 60);
    this.creating = true;
    try {
      const created = await this.conn.request('create', request);
      const room = created.room.room;
      const name = this.app.playerName();
      const joined = await this.conn.request('join', { room, seat: 0, ...(name ? { name } : {}) });
      store.saveSeat(room, joined.seat, joined.token);
      this.app.seated.add(room);
      if (bots > 0)
        await this.conn.request('add_bots', { room, kind: f.botKind || game.bots[0], count: bots });
      location.hash = `#/room/${room}`;
    } catch (err) {
      toast(`Could not create the room: ${err.message}`, 'error');
    } finally {
      this.creating = false;
    }
  }

  async joinRoom(room, seat) {
    if (store.seatOf(room)) {
      location.hash = `#/room/${room}`; // this browser already holds a seat there
      return;
    }
    const name = this.app.playerName();
    try {
      const joined = await this.conn.request('join', {
        room,
        ...(seat !== null ? { seat } : {}),
        ...(name ? { name } : {}),
      });
      store.saveSeat(room, joined.seat, joined.token);
      this.app.seated.add(room);
      location.hash = `#/room/${room}`;
    } catch (err) {
      toast(`Could not join: ${err.message}`, 'error');
    }
  }

  render() {
    if (!this.games.length) {
      replace(this.root, h('p.loading', null, 'Connecting…'));
      return;
    }
    replace(this.root, this.createForm(), this.myRooms(), this.roomList(), this.gameList());
  }

  createForm() {
    const game = this.game();
    const f = this.form;
    const set =
      (key, rerender = false) =>
      (e) => {
        const el = e.target;
        f[key] = el.type === 'checkbox' ? el.checked : el.value;
        if (rerender) {
          if (key === 'game') {
            f.options = {};
            f.preset = '';
            const g = this.game();
            f.seats = clamp(Number(f.seats), g.min_seats, g.max_seats);
          }
          f.bots = clamp(Number(f.bots), 0, Number(f.seats) - 1);
          this.render();
        }
      };
    const options = game.options.map((o) => optionField(o, f.options));
    return h(
      'form.card.create',
      { onsubmit: (e) => this.create(e), 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, 'New game'),
      h(
        'div.fields',
        null,
        field(
          'Game',
          h(
            'select',
            { id: 'f-game', name: 'game', onchange: set('game', true), dataset: { key: 'f-game' } },
            this.games.map((g) =>
              h('option', { value: g.name, selected: g.name === game.name }, g.title),
            ),
          ),
        ),
        field(
          'Seats',
          h('input', {
            id: 'f-seats',
            name: 'seats',
            type: 'number',
            min: game.min_seats,
            max: game.max_seats,
            value: f.seats,
            onchange: set('seats', true),
            dataset: { key: 'f-seats' },
          }),
        ),
        field(
          'House bots',
          h('input', {
            id: 'f-bots',
            name: 'bots',
            type: 'number',
            min: 0,
            max: Math.max(0, f.seats - 1),
            value: f.bots,
            onchange: set('bots', true),
            dataset: { key: 'f-bots' },
          }),
        ),
        game.bots.length > 1
          ? field(
              'Bot kind',
              h(
                'select',
                { id: 'f-bot-kind', onchange: set('botKind') },
                game.bots.map((b) => h('option', { value: b, selected: b === f.botKind }, b)),
              ),
            )
          : null,
        field(
          'Turn window (s)',
          h('input', {
            id: 'f-window',
            name: 'turn_window',
            type: 'number',
            min: 1,
            max: 3600,
            value: f.turn_window,
            onchange: set('turn_window'),
            dataset: { key: 'f-window' },
          }),
        ),
        Object.keys(game.presets).length
          ? field(
              'Preset',
              h(
                'select',
                { id: 'f-preset', onchange: set('preset'), dataset: { key: 'f-preset' } },
                h('option', { value: '' }, 'none (defaults)'),
                Object.entries(game.presets).map(([name, values]) =>
                  h(
                    'option',
                    { value: name, selected: f.preset === name },
                    `${name}: ${JSON.stringify(values)}`,
                  ),
                ),
              ),
            )
          : null,
        ...options,
        field(
          'Room name',
          h('input', {
            id: 'f-name',
            maxLength: 60,
            placeholder: 'optional',
            value: f.name,
            oninput: set('name'),
            dataset: { key: 'f-name' },
          }),
        ),
        h(
          'label.check',
          null,
          h('input', {
            type: 'checkbox',
            checked: f.public,
            onchange: set('public'),
            dataset: { key: 'f-public' },
          }),
          ' listed in the lobby',
        ),
      ),
      h(
        'p.small',
        null,
        'You take seat 1; the house bots take the next seats; open seats wait for people you send the link to. The game starts when every seat is taken.',
      ),
      h(
        'button.btn.primary',
        { type: 'submit', id: 'create-room', dataset: { key: 'create' } },
        'Create and sit down',
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
    const rows = this.rooms.map((r) => {
      const open = r.seats.filter((s) => s.kind === 'open');
      const who = r.seats.map((s) => (s.kind === 'open' ? 'open' : s.name)).join(', ');
      return h(
        'tr',
        { dataset: { room: r.room } },
        h('td', null, h('a', { href: `#/room/${r.room}` }, r.name)),
        h('td', null, this.title(r.game)),
        h('td', null, optionsText(r.options)),
        h('td', null, r.status),
        h('td', null, who),
        h('td', null, `${r.turn_window} s`),
        h(
          'td.actions',
          null,
          store.seatOf(r.room)
            ? h('a.btn.small.primary', { href: `#/room/${r.room}` }, 'Your seat')
            : open.length && r.status !== 'over'
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
      'section.card',
      { 'aria-labelledby': 'rooms-title' },
      h('h2', { id: 'rooms-title' }, 'Open rooms'),
      rows.length
        ? h(
            'div.table-wrap',
            null,
            h(
              'table.rooms',
              null,
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Room', 'Game', 'Options', 'Status', 'Seats', 'Turn', ''].map((t) =>
                    h('th', { scope: 'col' }, t),
                  ),
                ),
              ),
              h('tbody', null, rows),
            ),
          )
        : h('p', null, 'No public rooms right now: create one.'),
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
                  'Presets: ',
                  Object.entries(g.presets)
                    .map(([n, v]) => `${n} ${JSON.stringify(v)}`)
                    .join('; '),
                )
              : null,
          ),
        ]),
      ),
    );
  }
}

function clamp(n, lo, hi) {
  if (!Number.isFinite(n)) return lo;
  return Math.max(lo, Math.min(hi, Math.round(n)));
}

function field(label, input) {
  const id = input.id;
  return h('div.field', null, h('label', { for: id }, label), input);
}

function optionsText(options) {
  return Object.entries(options)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** An input for one game option: a checkbox, a bounded number or a choice. */
function optionField(o, values) {
  const id = `opt-${o.name}`;
  const value = values[o.name] ?? o.default;
  const onchange = (e) => {
    const el = e.target;
    if (typeof o.default === 'boolean') values[o.name] = el.checked;
    else if (typeof o.default === 'number')
      values[o.name] = clamp(Number(el.value), o.min ?? -2147483647, o.max ?? 2147483647);
    else values[o.name] = el.value;
  };
  let input;
  if (typeof o.default === 'boolean') {
    input = h('input', { id, type: 'checkbox', checked: value, onchange, dataset: { key: id } });
  } else if (typeof o.default === 'number') {
    input = h('input', {
      id,
      type: 'number',
      min: o.min,
      max: o.max,
      value,
      onchange,
      dataset: { key: id },
    });
  } else {
    input = h(
      'select',
      { id, onchange, dataset: { key: id } },
      (o.choices || [value]).map((c) => h('option', { value: c, selected: c === value }, c)),
    );
  }
  const f = field(o.name, input);
  if (o.description) f.title = o.description;
  return f;
}
