// Qwinto: three sheared rows on a 3 x 12 grid, like the paper sheet (docs/rules.md, Qwinto).

import { h } from '../dom.js';
import { LETTER, actButton, die, failedBoxes, seatName, withSheets, title } from './common.js';

/** The game's title, as the server's `games` names it (rules/qwinto/__init__.py). */
export const TITLE = 'Qwinto';

/** The game the new-game form offers first. */
export const OFFERED_FIRST = true;

/** The room log's words of this game's own (describe.js): a roll names its dice, and
 * what an `enter` writes is the sum of the last roll. */
export const LOG = {
  roll: (a) => `rolls ${a.dice.join(' + ')}`,
  sumsDice: true,
  remember(view, memo) {
    if (view.roll) memo.sum = view.sum;
  },
};

const ROWS = ['red', 'yellow', 'blue'];
const OFFSET = { red: 2, yellow: 1, blue: 0 };
const BLOCKED = { red: 3, yellow: 5, blue: 4 };
const BONUS = { red: [1, 5], yellow: [7], blue: [2, 9] };

function sheet(ctx, seat, interactive) {
  const view = ctx.view;
  const data = view.sheets[seat];
  const enter = new Map();
  if (interactive) {
    for (const a of ctx.actions) if (a.type === 'enter') enter.set(`${a.row}/${a.box}`, a);
  }
  const held = interactive && view.answer && view.answer.type === 'enter' ? view.answer : null;
  const rows = ROWS.map((row) => {
    const cells = [
      h('div.row-label', { class: `c-${row}` }, h('b', null, LETTER[row]), ` ${title(row)}`),
    ];
    for (let col = 0; col < 12; col++) {
      const box = col - OFFSET[row];
      if (box < 0 || box > 9) {
        cells.push(h('div.spacer', { 'aria-hidden': 'true' }));
        continue;
      }
      const value = data.rows[row][box];
      const classes = [`c-${row}`];
      if (BONUS[row].includes(box)) classes.push('bonus');
      const where = `${row} box ${box + 1}`;
      if (box === BLOCKED[row]) {
        cells.push(
          h(
            'div.box.blocked',
            { class: classes.join(' '), 'aria-label': `${where}: blocked` },
            '✕',
          ),
        );
        continue;
      }
      const action = enter.get(`${row}/${box}`);
      if (held && held.row === row && held.box === box) {
        cells.push(
          h(
            'div.box.held',
            { class: classes.join(' '), 'aria-label': `${where}: your answer ${view.sum}` },
            view.sum,
          ),
        );
      } else if (action) {
        cells.push(
          h(
            'button.box.legal',
            {
              type: 'button',
              class: classes.join(' '),
              dataset: { key: `q-${row}-${box}`, row, box: String(box) },
              'aria-label': `Write ${view.sum} in ${where}`,
              onclick: () => ctx.act(action),
            },
            h('span.ghost', null, view.sum),
          ),
        );
      } else {
        cells.push(
          h(
            'div.box',
            {
              class: classes.concat(value === null ? ['empty'] : ['filled']).join(' '),
              'aria-label': value === null ? `${where}: empty` : `${where}: ${value}`,
              'aria-disabled': interactive && value === null && enter.size ? 'true' : null,
            },
            value ?? '',
          ),
        );
      }
    }
    return h('div.qwinto-row', { role: 'group', 'aria-label': `${title(row)} row` }, cells);
  });
  return h(
    'div.sheet.qwinto-sheet',
    { dataset: { sheet: String(seat) } },
    h('div.qwinto-grid', null, rows),
    failedBoxes(data.failed),
  );
}

function controls(ctx, local) {
  const view = ctx.view;
  const rolls = ctx.actions.filter((a) => a.type === 'roll');
  const out = [];
  if (view.roll) {
    out.push(
      h(
        'div.dice-line',
        { 'aria-label': 'the roll' },
        Object.entries(view.roll).map(([c, v]) => die(c, v)),
        h('span.dice-sum', null, '= ', h('b', { dataset: { sum: '' } }, view.sum)),
      ),
    );
  }
  if (rolls.length) {
    if (!local.dice) local.dice = new Set(ROWS);
    const chosen = ROWS.filter((c) => local.dice.has(c));
    const action = rolls.find((a) => a.dice.join() === chosen.join()) || null;
    out.push(
      h(
        'div.choose',
        { role: 'group', 'aria-label': 'dice to roll' },
        h('span.prompt', null, 'Choose the dice to roll:'),
        ROWS.map((c) =>
          h(
            'button.die-toggle',
            {
              type: 'button',
              class: `c-${c}`,
              'aria-pressed': String(local.dice.has(c)),
              dataset: { key: `dice-${c}` },
              onclick: () => {
                if (local.dice.has(c)) local.dice.delete(c);
                else local.dice.add(c);
                ctx.rerender();
              },
            },
            h('b', null, LETTER[c]),
            ` ${title(c)}`,
          ),
        ),
        actButton(
          ctx,
          `Roll ${chosen.length || ''} ${chosen.length === 1 ? 'die' : 'dice'}`,
          action,
          {
            class: 'primary',
            dataset: { key: 'roll', action: 'roll' },
          },
        ),
      ),
    );
  }
  const reroll = ctx.actions.find((a) => a.type === 'reroll');
  if (reroll)
    out.push(
      actButton(ctx, 'Roll the same dice again', reroll, {
        dataset: { key: 'reroll', action: 'reroll' },
      }),
    );
  const pass = ctx.actions.find((a) => a.type === 'pass');
  if (pass) {
    const failing = view.active === ctx.seat;
    const canEnter = ctx.actions.some((a) => a.type === 'enter');
    const text = canEnter
      ? `Write ${view.sum} in a highlighted box, or pass`
      : `No box can take ${view.sum}: pass`;
    out.push(
      h('p.prompt', null, `${text}${failing ? ' (you rolled: passing is a failed throw)' : ''}.`),
      actButton(ctx, failing ? 'Pass (failed throw)' : 'Pass', pass, {
        dataset: { key: 'pass', action: 'pass' },
      }),
    );
  }
  if (!ctx.actions.length) out.push(h('p.prompt.waiting', null, waitingText(ctx)));
  return h('div.controls', null, out);
}

function waitingText(ctx) {
  const view = ctx.view;
  if (view.over) return 'The game is over.';
  if (ctx.seat !== null && view.answer) {
    const a = view.answer;
    return a.type === 'enter'
      ? `Your answer (${view.sum} in ${a.row} box ${a.box + 1}) is in; waiting for the others.`
      : 'You passed; waiting for the others.';
  }
  if (view.phase === 'choose')
    return `Waiting for ${seatName(ctx, view.active)} to choose the dice.`;
  if (view.phase === 'confirm')
    return `Waiting for ${seatName(ctx, view.active)} to keep or roll again.`;
  const waiting = (view.actors || []).map((s) => seatName(ctx, s));
  return waiting.length ? `Waiting for ${waiting.join(', ')} to answer.` : 'Waiting for the dice.';
}

export function render(ctx) {
  const local = ctx.local;
  if (local.window !== ctx.view.window) {
    local.window = ctx.view.window;
    local.dice = null;
  }
  return withSheets(ctx, [controls(ctx, local)], (s, mine) => sheet(ctx, s, mine));
}
