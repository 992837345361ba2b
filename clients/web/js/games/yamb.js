// Yamb: six dice to hold and roll, and the 13 x 6 table with its sums.

import { h } from '../dom.js';
import { actButton, seatName, withSheets } from './common.js';

/** The game's title, as the server's `games` names it (rules/yamb/__init__.py). */
export const TITLE = 'Yamb';

const ROWS = [
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  'min',
  'max',
  'kenta',
  'full',
  'poker',
  'yamb',
  'royal',
];
const COLUMNS = ['down', 'up', 'free1', 'free2', 'call', 'hand'];
/** A column's label on the sheet, as the rules draw it (docs/rules.md, Yamb). */
export const COLUMN_LABEL = {
  down: '↓',
  up: '↑',
  free1: 'free 1',
  free2: 'free 2',
  call: 'call',
  hand: 'hand',
};
/** A column's name in words (the log, screen readers). */
export const COLUMN_NAME = {
  down: 'down',
  up: 'up',
  free1: 'free 1',
  free2: 'free 2',
  call: 'call',
  hand: 'hand',
};

/** The room log's words of this game's own (describe.js): columns by name, and each
 * seat's dice, which a `roll hold` names by position. */
export const LOG = {
  columns: COLUMN_NAME,
  remember(view, memo) {
    if (Array.isArray(view.tables))
      memo.dice = Object.fromEntries(
        view.tables.flatMap((t, s) => (Array.isArray(t.dice) ? [[s, t.dice]] : [])),
      );
  },
};

/** What each column allows (the header's tooltip and its screen-reader text). */
const COLUMN_RULE = {
  down: 'down: top to bottom, each cell after the one above',
  up: 'up: bottom to top, each cell after the one below',
  free1: 'free 1: any cell, in any order',
  free2: 'free 2: any cell, in any order',
  call: 'call: announce a row after the first roll, then write it',
  hand: 'hand: only straight after the first roll',
};
const PIPS = ['', '⚀', '⚁', '⚂', '⚃', '⚄', '⚅'];

/** What a cell would take from these dice (docs/rules.md, Yamb): shown on the clickable cells. */
export function cellValue(row, dice) {
  const count = [0, 0, 0, 0, 0, 0, 0];
  for (const d of dice) count[d]++;
  const sum = dice.reduce((a, b) => a + b, 0);
  const best = (n, bonus) => {
    for (let v = 6; v >= 1; v--) if (count[v] >= n) return n * v + bonus;
    return 0;
  };
  switch (row) {
    case 'min':
    case 'max':
      return sum;
    case 'kenta':
      return [1, 2, 3, 4, 5, 6].every((v) => count[v] === 1) ? 61 : 0;
    case 'full': {
      let top = 0;
      for (let a = 1; a <= 6; a++) {
        for (let b = 1; b <= 6; b++) {
          if (a !== b && count[a] >= 3 && count[b] >= 2) top = Math.max(top, 3 * a + 2 * b + 30);
        }
      }
      return top;
    }
    case 'poker':
      return best(4, 40);
    case 'yamb':
      return best(5, 50);
    case 'royal':
      return best(6, 60);
    default: {
      const n = Number(row);
      return count[n] * n;
    }
  }
}

function table(ctx, seat, interactive) {
  const t = ctx.view.tables[seat];
  const cellAction = new Map();
  if (interactive) {
    for (const a of ctx.actions) {
      if (a.type === 'write') cellAction.set(`${a.column}/${a.row}`, a);
      if (a.type === 'call') cellAction.set(`call/${a.row}`, a);
    }
  }
  const head = h(
    'tr',
    null,
    h('th', { scope: 'col' }, ''),
    COLUMNS.map((c) =>
      h(
        'th',
        { scope: 'col', title: COLUMN_RULE[c], dataset: { column: c } },
        h('span', { 'aria-hidden': 'true' }, COLUMN_LABEL[c]),
        h('span.sr', null, `${COLUMN_NAME[c]} column`),
      ),
    ),
  );
  const body = [];
  const sumRow = (label, key) =>
    h(
      'tr.sum',
      null,
      h('th', { scope: 'row' }, label),
      COLUMNS.map((c) => h('td', null, t.sums[c][key])),
    );
  for (const row of ROWS) {
    body.push(
      h(
        'tr',
        null,
        h('th', { scope: 'row' }, row),
        COLUMNS.map((c) => {
          const value = t.columns[c][row];
          const action = cellAction.get(`${c}/${row}`);
          const called = c === 'call' && t.called === row;
          if (value !== undefined && value !== null) return h('td.written', null, value);
          if (action) {
            const isCall = action.type === 'call';
            const preview = isCall || !t.dice ? null : cellValue(row, t.dice);
            return h(
              'td',
              { class: called ? 'called' : '' },
              h(
                'button.cell-btn',
                {
                  type: 'button',
                  class: isCall ? 'call' : 'write',
                  dataset: { key: `y-${c}-${row}`, column: c, row, action: action.type },
                  'aria-label': isCall
                    ? `Announce ${row} in the call column`
                    : `Write ${preview} in the ${COLUMN_NAME[c]} column, row ${row}`,
                  onclick: () => ctx.act(action),
                },
                isCall ? 'call' : preview,
              ),
            );
          }
          return h(
            'td',
            { class: called ? 'called' : 'empty', 'aria-disabled': interactive ? 'true' : null },
            called ? 'called' : '',
          );
        }),
      ),
    );
    if (row === '6') body.push(sumRow('S1', 's1'));
    if (row === 'max') body.push(sumRow('S2', 's2'));
  }
  body.push(sumRow('S3', 's3'), sumRow('Total', 'total'));
  return h(
    'div.sheet.yamb-sheet',
    { dataset: { sheet: String(seat) }, 'data-scroll': `yamb-${seat}` },
    h('table.yamb', null, h('thead', null, head), h('tbody', null, body)),
  );
}

function diceView(ctx, local) {
  const view = ctx.view;
  const seat = ctx.seat ?? view.active ?? 0;
  const t = view.tables[seat];
  const rolls = ctx.actions.filter((a) => a.type === 'roll');
  const canHold = rolls.length > 0 && t.rolls > 0;
  const dice = t.dice || [0, 0, 0, 0, 0, 0];
  const faces = dice.map((v, i) => {
    const held = local.hold.has(i);
    const label = v ? `die ${i + 1}: ${v}${held ? ', held' : ''}` : `die ${i + 1}: not rolled`;
    const face = [
      h('span.pip', { 'aria-hidden': 'true' }, PIPS[v] || '·'),
      h('span.die-value', { 'aria-hidden': 'true' }, v || ''),
    ];
    if (!canHold) return h('span.die.yamb-die', { role: 'img', 'aria-label': label }, face);
    return h(
      'button.die.yamb-die',
      {
        type: 'button',
        'aria-pressed': String(held),
        'aria-label': label,
        dataset: { key: `hold-${i}`, die: String(i) },
        onclick: () => {
          if (held) local.hold.delete(i);
          else local.hold.add(i);
          ctx.rerender();
        },
      },
      face,
      held ? h('span.held-tag', null, 'held') : null,
    );
  });
  const hold = [...local.hold].sort((a, b) => a - b);
  const roll = rolls.find((a) => a.hold.join() === hold.join()) || null;
  const label = t.rolls === 0 ? 'Roll the dice' : `Roll again (${t.rolls + 1} of 3)`;
  const out = [h('div.dice-line', { 'aria-label': 'the dice' }, faces)];
  if (ctx.actions.length) {
    out.push(
      h(
        'div.button-row',
        null,
        rolls.length
          ? actButton(ctx, label, roll, {
              class: 'primary',
              dataset: { key: 'roll', action: 'roll' },
            })
          : null,
      ),
    );
    let prompt = 'Roll the dice to start your turn.';
    if (t.rolls > 0) {
      prompt = t.called
        ? `You called ${t.called}: roll on, or write it.`
        : 'Click dice to hold them and roll again, announce a call (the "call" cells), or write a highlighted cell.';
      if (!rolls.length)
        prompt = t.called ? `Write your call (${t.called}).` : 'Write a highlighted cell.';
    }
    out.push(h('p.prompt', null, prompt));
  } else {
    out.push(
      h(
        'p.prompt.waiting',
        null,
        view.over ? 'The game is over.' : `Waiting for ${activeNames(ctx)}.`,
      ),
    );
  }
  return h('div.controls', null, out);
}

function activeNames(ctx) {
  const actors = ctx.view.actors || [];
  return actors.length ? actors.map((s) => seatName(ctx, s)).join(', ') : 'the dice';
}

export function render(ctx) {
  const view = ctx.view;
  const local = ctx.local;
  const seat = ctx.seat ?? view.active ?? 0;
  const t = view.tables[seat];
  const key = `${view.round}:${t.rolls}:${(t.dice || []).join('')}`;
  if (local.key !== key) {
    local.key = key;
    local.hold = new Set();
  }
  const main = [
    h(
      'p.round',
      null,
      `Round ${view.round} of 78${view.options.mode === 'simultaneous' ? ' (simultaneous)' : ''}`,
    ),
    diceView(ctx, local),
  ];
  return withSheets(ctx, main, (s, mine) => table(ctx, s, mine));
}
