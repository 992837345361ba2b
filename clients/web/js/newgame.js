// The lobby's form for a new room. It is built once and then changed in place, never
// redrawn: a redraw takes the focus, the caret and a value not yet committed from whoever
// is typing (issue 33: a changed Seats lost the House bots typed next). Only a change of
// game rebuilds the fields that depend on the game, while the focus is on the game's list.

import { h, replace } from './dom.js';
import * as GAMES from './games/index.js';
import { cleanName } from './names.js';
import {
  defaultBot,
  defaultPreset,
  matchRules,
  presetNames,
  presetTitle,
  resolveOptions,
  valuesText,
} from './presets.js';

export const TURN_WINDOW = 30;

const BOT_TITLE = { strong: 'the best', greedy: 'middling', random: 'plays at random' };

function clamp(n, lo, hi) {
  if (!Number.isFinite(n)) return lo;
  return Math.max(lo, Math.min(hi, Math.round(n)));
}

export class NewGameForm {
  /** `games`: the server's games; `submit(game, spec)` creates the room (a promise). */
  constructor(games, submit) {
    this.games = games;
    this.submit = submit;
    this.busy = false;
    this.f = {
      game: (games.find((g) => GAMES[g.name]?.OFFERED_FIRST) || games[0]).name,
      seats: 2,
      bots: 1,
      botKind: null, // the game's default opponent until chosen
      turn_window: TURN_WINDOW,
      rules: null, // a preset's name, 'default' or 'custom'
      options: null, // every option's value
      name: '',
      public: true,
    };
    this.el = this.build();
    this.gameChanged();
  }

  game() {
    return this.games.find((g) => g.name === this.f.game) || this.games[0];
  }

  /** An input `f-ID` kept in the form's `key`, then `then()`: a number or a checkbox once
   * committed (`change`), a text as it is typed. */
  input(key, id, attrs, then = null) {
    const f = this.f;
    const el = h('input', { id: `f-${id}`, dataset: { key: `f-${id}` }, ...attrs });
    if (el.type === 'checkbox') el.checked = f[key];
    else el.value = f[key];
    el.addEventListener(el.type === 'text' ? 'input' : 'change', () => {
      f[key] = el.type === 'checkbox' ? el.checked : el.value;
      if (then) then();
    });
    return el;
  }

  build() {
    const f = this.f;
    this.gameSelect = h(
      'select',
      { id: 'f-game', name: 'game', dataset: { key: 'f-game' } },
      this.games.map((g) => h('option', { value: g.name, selected: g.name === f.game }, g.title)),
    );
    this.gameSelect.addEventListener('change', () => {
      f.game = this.gameSelect.value;
      this.gameChanged();
    });
    const limit = () => this.limitBots();
    this.seats = this.input('seats', 'seats', { name: 'seats', type: 'number' }, limit);
    this.bots = this.input('bots', 'bots', { name: 'bots', type: 'number', min: 0 }, limit);
    this.botKind = h('div.slot');
    this.rules = h('div.slot');
    this.options = h('div.slot');
    return h(
      'form.card.create',
      { onsubmit: (e) => this.create(e), 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, 'New game'),
      h(
        'div.fields',
        null,
        field('Game', this.gameSelect),
        field('Seats', this.seats),
        field('House bots', this.bots),
        this.botKind,
        field(
          'Turn window (s)',
          this.input('turn_window', 'window', {
            name: 'turn_window',
            type: 'number',
            min: 1,
            max: 3600,
          }),
        ),
        this.rules,
        this.options,
        field('Room name', this.input('name', 'name', { maxLength: 60, placeholder: 'optional' })),
        h(
          'label.check',
          null,
          this.input('public', 'public', { type: 'checkbox' }),
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

  /** A new game: its own seats, opponents, rules and options (the rules as it offers). */
  gameChanged() {
    const f = this.f;
    const game = this.game();
    f.rules = defaultPreset(game) || 'default';
    f.options = resolveOptions(game, f.rules in game.presets ? f.rules : '');
    if (!game.bots.includes(f.botKind)) f.botKind = defaultBot(game);
    this.seats.min = game.min_seats;
    this.seats.max = game.max_seats;
    f.seats = clamp(Number(f.seats), game.min_seats, game.max_seats);
    this.seats.value = f.seats;
    this.limitBots();
    replace(this.botKind, this.botKindField(game));
    replace(this.rules, this.rulesChooser(game));
    this.optionInputs = new Map();
    replace(
      this.options,
      game.options.map((o) => this.optionField(o)),
    );
  }

  /** At most a bot a seat but the creator's: the limit follows the seats. */
  limitBots() {
    const game = this.game();
    const most = Math.max(0, clamp(Number(this.f.seats), game.min_seats, game.max_seats) - 1);
    this.bots.max = most;
    const bots = clamp(Number(this.f.bots), 0, most);
    if (String(bots) !== String(this.f.bots)) this.f.bots = this.bots.value = bots;
  }

  botKindField(game) {
    if (game.bots.length < 2) return null;
    const best = defaultBot(game);
    const select = h(
      'select',
      { id: 'f-bot-kind', dataset: { key: 'f-bot-kind' } },
      [...game.bots]
        .sort((a, b) => (b === best) - (a === best))
        .map((b) =>
          h(
            'option',
            { value: b, selected: b === this.f.botKind },
            BOT_TITLE[b] ? `${b} (${BOT_TITLE[b]})` : b,
          ),
        ),
    );
    select.addEventListener('change', () => {
      this.f.botKind = select.value;
    });
    return field('Bot kind', select);
  }

  /** One click to the publisher's rules: a radio per preset (official first), the defaults. */
  rulesChooser(game) {
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
          checked: this.f.rules === value,
          onchange: () => this.chooseRules(value),
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
      h('p.small.rule-custom', { hidden: true }, 'Your own options (below).'),
    );
  }

  /** A preset chosen: its values into the option fields. */
  chooseRules(rules) {
    const game = this.game();
    this.f.rules = rules;
    this.f.options = resolveOptions(game, rules in game.presets ? rules : '');
    for (const [name, input] of this.optionInputs) {
      if (input.type === 'checkbox') input.checked = this.f.options[name];
      else input.value = this.f.options[name];
    }
    this.showRules();
  }

  /** Which preset the options amount to now (or "your own options"). */
  showRules() {
    for (const radio of this.rules.querySelectorAll('input[name="rules"]'))
      radio.checked = radio.value === this.f.rules;
    const custom = this.rules.querySelector('.rule-custom');
    if (custom) custom.hidden = this.f.rules !== 'custom';
  }

  /** An input for one game option: a checkbox, a bounded number or a choice. */
  optionField(o) {
    const id = `opt-${o.name}`;
    const value = this.f.options[o.name] ?? o.default;
    let input;
    if (typeof o.default === 'boolean') {
      input = h('input', { id, type: 'checkbox', checked: value, dataset: { key: id } });
    } else if (typeof o.default === 'number') {
      input = h('input', {
        id,
        type: 'number',
        min: o.min,
        max: o.max,
        value,
        dataset: { key: id },
      });
    } else {
      input = h(
        'select',
        { id, dataset: { key: id } },
        (o.choices || [value]).map((c) => h('option', { value: c, selected: c === value }, c)),
      );
    }
    input.addEventListener('change', () => {
      const values = this.f.options;
      if (typeof o.default === 'boolean') values[o.name] = input.checked;
      else if (typeof o.default === 'number')
        values[o.name] = clamp(Number(input.value), o.min ?? -2147483647, o.max ?? 2147483647);
      else values[o.name] = input.value;
      this.f.rules = matchRules(this.game(), values);
      this.showRules();
    });
    this.optionInputs.set(o.name, input);
    const f = field(o.name, input);
    if (o.description) f.title = o.description;
    return f;
  }

  /** What `createRoom` takes: the form's values, each within its bounds. */
  spec() {
    const f = this.f;
    const game = this.game();
    const seats = clamp(Number(f.seats), game.min_seats, game.max_seats);
    return {
      seats,
      bots: clamp(Number(f.bots), 0, seats - 1),
      botKind: f.botKind,
      preset: f.rules in game.presets ? f.rules : null,
      options: f.options,
      turnWindow: clamp(Number(f.turn_window), 1, 3600),
      public: f.public,
      name: cleanName(f.name, 60),
    };
  }

  async create(e) {
    e.preventDefault();
    if (this.busy) return;
    this.busy = true;
    try {
      await this.submit(this.game(), this.spec());
    } finally {
      this.busy = false;
    }
  }
}

function field(label, input) {
  return h('div.field', null, h('label', { for: input.id }, label), input);
}
