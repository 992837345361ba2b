// The lobby: "Play now" per game, the games and their options, the open rooms, and a form
// to create a room.

import { h, replace, toast } from './dom.js';
import { Disconnected } from './dicehall.js';
import { cleanName } from './names.js';
import * as store from './store.js';

const ROOMS_EVERY_MS = 3000;
const TURN_WINDOW = 30;
/** The preset that holds the publisher's rules (docs/games/*.md), offered first. */
export const OFFICIAL = 'official';

/** A person's seat whose connection is gone: quick match never seats anyone beside it,
 * where every turn would wait out the window for them (issue 33). */
const away = (s) => s.kind === 'human' && !s.connected;

/** A room whose seated people have all gone is not offered to join: nobody is there. */
const deserted = (r) =>
  r.seats.some((s) => s.kind === 'human') && r.seats.filter((s) => s.kind === 'human').every(away);

/** The default opponent: the strongest house bot the game offers. */
export function defaultBot(game) {
  const bots = (game && game.bots) || [];
  return bots.includes('strong') ? 'strong' : bots[0] || 'random';
}

/** The preset a new room starts from: the publisher's rules when the game has them. */
export function defaultPreset(game) {
  return game && game.presets && OFFICIAL in game.presets ? OFFICIAL : '';
}

/** Every option of `game` with the preset's values over the defaults. */
export function resolveOptions(game, preset) {
  const out = {};
  for (const o of game.options) out[o.name] = o.default;
  return { ...out, ...((preset && game.presets[preset]) || {}) };
}

/** The presets in the order offered: the official (publisher's) rules first. */
function presetNames(game) {
  return Object.keys(game.presets).sort((a, b) => (b === OFFICIAL) - (a === OFFICIAL));
}

/** A preset's name as a player reads it. */
export function presetTitle(name) {
  if (name === OFFICIAL) return 'Official rules (the publisher\u2019s)';
  return `Preset \u201c${name}\u201d`;
}

/** Option values in words: "reroll on, lock_after 5". */
function valuesText(values) {
  return Object.entries(values)
    .map(([k, v]) => (typeof v === 'boolean' ? `${k} ${v ? 'on' : 'off'}` : `${k} ${v}`))
    .join(', ');
}

export class LobbyView {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.games = [];
    this.rooms = [];
    this.total = 0;
    this.form = {
      game: 'qwinto',
      seats: 2,
      bots: 1,
      botKind: null, // the game's default opponent until chosen
      turn_window: TURN_WINDOW,
      rules: null, // a preset's name, 'default' or 'custom'; null: the game's default preset
      options: null, // every option's value; null: as the rules say
      name: '',
      public: true,
    };
    this.root = h('section.lobby', { id: 'lobby' });
    this.timer = null;
    this.creating = false;
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

  game(name = this.form.game) {
    return this.games.find((g) => g.name === name) || this.games[0];
  }

  /** The form's rules and option values, filled in from the game's defaults. */
  formRules(game) {
    const f = this.form;
    if (f.rules === null) f.rules = defaultPreset(game) || 'default';
    if (f.options === null)
      f.options = resolveOptions(game, f.rules in game.presets ? f.rules : '');
    if (!f.botKind || !game.bots.includes(f.botKind)) f.botKind = defaultBot(game);
    return f;
  }

  async create(e) {
    e.preventDefault();
    if (this.creating) return;
    const game = this.game();
    const f = this.formRules(game);
    const seats = clamp(Number(f.seats), game.min_seats, game.max_seats);
    this.creating = true;
    try {
      await this.createRoom(game, {
        seats,
        bots: clamp(Number(f.bots), 0, seats - 1),
        botKind: f.botKind,
        preset: f.rules in game.presets ? f.rules : null,
        options: f.options,
        turnWindow: clamp(Number(f.turn_window), 1, 3600),
        public: f.public,
        name: cleanName(f.name, 60),
      });
    } catch (err) {
      if (!(err instanceof Disconnected))
        toast(`Could not create the room: ${err.message}`, 'error');
    } finally {
      this.creating = false;
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
      replace(this.root, h('p.loading', null, 'Connecting…'));
      return;
    }
    replace(
      this.root,
      h('div.lobby-main', null, this.quickMatch(), this.createForm()),
      h('div.lobby-side', null, this.myRooms(), this.roomList(), this.gameList()),
    );
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

  createForm() {
    const game = this.game();
    const f = this.formRules(game);
    const set =
      (key, rerender = false) =>
      (e) => {
        const el = e.target;
        f[key] = el.type === 'checkbox' ? el.checked : el.value;
        if (rerender) {
          if (key === 'game') {
            f.rules = null;
            f.options = null;
            const g = this.game();
            this.formRules(g);
            f.seats = clamp(Number(f.seats), g.min_seats, g.max_seats);
          }
          f.bots = clamp(Number(f.bots), 0, Number(f.seats) - 1);
          this.render();
        }
      };
    const chooseRules = (rules) => () => {
      f.rules = rules;
      f.options = resolveOptions(game, rules in game.presets ? rules : '');
      this.render();
    };
    const optionChanged = () => {
      f.rules = matchRules(game, f.options);
      this.render();
    };
    const options = game.options.map((o) => optionField(o, f.options, optionChanged));
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
                { id: 'f-bot-kind', onchange: set('botKind'), dataset: { key: 'f-bot-kind' } },
                [...game.bots]
                  .sort((a, b) => (b === defaultBot(game)) - (a === defaultBot(game)))
                  .map((b) =>
                    h(
                      'option',
                      { value: b, selected: b === f.botKind },
                      BOT_TITLE[b] ? `${b} (${BOT_TITLE[b]})` : b,
                    ),
                  ),
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
        rulesChooser(game, f.rules, chooseRules),
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

const BOT_TITLE = { strong: 'the best', greedy: 'middling', random: 'plays at random' };

/** The rules a set of option values amounts to: a preset's name, 'default' or 'custom'. */
function matchRules(game, values) {
  const same = (preset) => {
    const want = resolveOptions(game, preset);
    return Object.keys(want).every((k) => want[k] === values[k]);
  };
  for (const name of presetNames(game)) if (same(name)) return name;
  return same('') ? 'default' : 'custom';
}

/** One click to the publisher's rules: a radio per preset (official first), the defaults. */
function rulesChooser(game, current, choose) {
  if (!Object.keys(game.presets).length) return null; // only the defaults: nothing to choose
  const choice = (value, label, values) =>
    h(
      'label.rule-choice',
      null,
      h('input', {
        type: 'radio',
        name: 'rules',
        id: `f-rules-${value}`,
        value,
        checked: current === value,
        onchange: choose(value),
        dataset: { key: `f-rules-${value}` },
      }),
      ' ',
      h('span.rule-name', null, label),
      h('span.small', null, ` · ${valuesText(values)}`),
    );
  return h(
    'fieldset.rules',
    { id: 'f-rules' },
    h('legend', null, 'Rules'),
    presetNames(game).map((n) => choice(n, presetTitle(n), resolveOptions(game, n))),
    choice('default', 'dicehall defaults', resolveOptions(game, '')),
    current === 'custom' ? h('p.small.rule-custom', null, 'Your own options (below).') : null,
  );
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
function optionField(o, values, changed) {
  const id = `opt-${o.name}`;
  const value = values[o.name] ?? o.default;
  const onchange = (e) => {
    const el = e.target;
    if (typeof o.default === 'boolean') values[o.name] = el.checked;
    else if (typeof o.default === 'number')
      values[o.name] = clamp(Number(el.value), o.min ?? -2147483647, o.max ?? 2147483647);
    else values[o.name] = el.value;
    changed();
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
