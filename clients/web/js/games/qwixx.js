// Qwixx: four rows of eleven boxes, red/yellow 2..12 and green/blue 12..2, marked left to right.

import { h } from '../dom.js';
import { LETTER, actButton, die, failedBoxes, seatName, withSheets, title } from './common.js';

/** The game's title, as the server's `games` names it (rules/qwixx/__init__.py). */
export const TITLE = 'Qwixx';

const ROWS = ['red', 'yellow', 'green', 'blue'];
const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element of `tag` with `attrs` (numbers written as strings). */
function svgElement(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** A 16 x 16 icon of class `cls` drawing `parts`, hidden from screen readers (its box is
 * labelled). */
function icon(cls, ...parts) {
  const svg = svgElement('svg', {
    viewBox: '0 0 16 16',
    class: cls,
    'aria-hidden': 'true',
    focusable: 'false',
  });
  svg.append(...parts);
  return svg;
}

/** The paper sheet's padlock, drawn (no emoji font needed). */
function lockIcon() {
  return icon(
    'lock-icon',
    svgElement('path', {
      d: 'M4.75 7.5V5.25a3.25 3.25 0 0 1 6.5 0V7.5',
      fill: 'none',
      stroke: 'currentColor',
      'stroke-width': 1.7,
    }),
    svgElement('rect', { x: 2.75, y: 7, width: 10.5, height: 8, rx: 1.6, fill: 'currentColor' }),
  );
}

/** A pen's cross, drawn inside its box (a ✕ glyph's size is the font's: it spilled out of a
 * phone's boxes); the box's number is painted over it, so it stays readable. */
function crossIcon() {
  return icon(
    'cross',
    svgElement('path', {
      d: 'M2.5 2.5 13.5 13.5M13.5 2.5 2.5 13.5',
      fill: 'none',
      stroke: 'currentColor',
      'stroke-width': 2.2,
      'stroke-linecap': 'round',
    }),
  );
}

const UP = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const NUMBERS = { red: UP, yellow: UP, green: [...UP].reverse(), blue: [...UP].reverse() };

function sheet(ctx, seat, interactive) {
  const view = ctx.view;
  const data = view.sheets[seat];
  const marks = new Map();
  if (interactive)
    for (const a of ctx.actions) if (a.type === 'mark') marks.set(`${a.row}/${a.number}`, a);
  const held = interactive ? view.answer : null;
  const rows = ROWS.map((row) => {
    const marked = new Set(data.rows[row]);
    const closed = (view.closed || []).includes(row);
    const locked = (data.locked || []).includes(row);
    // marks go left to right: a box left of the rightmost mark can never be marked
    const reach = Math.max(-1, ...NUMBERS[row].map((n, i) => (marked.has(n) ? i : -1)));
    const cells = NUMBERS[row].map((n, i) => {
      const where = `${row} ${n}`;
      const last = i === 10;
      const classes = [`c-${row}`, last ? 'last' : ''].join(' ');
      const action = marks.get(`${row}/${n}`);
      if (!marked.has(n) && (i < reach || (closed && !action))) {
        const why = i < reach ? 'skipped' : 'row closed';
        return h(
          'div.box.skipped',
          { class: classes, 'aria-label': `${where}: closed (${why})`, title: `closed (${why})` },
          h('s', { 'aria-hidden': 'true' }, n),
        );
      }
      if (marked.has(n)) {
        return h(
          'div.box.marked',
          { class: classes, 'aria-label': `${where}: marked` },
          h('span.num', null, n),
          crossIcon(),
        );
      }
      if (held && held.type === 'mark' && held.row === row && held.number === n) {
        return h('div.box.held', { class: classes, 'aria-label': `${where}: your answer` }, n);
      }
      if (action) {
        return h(
          'button.box.legal',
          {
            type: 'button',
            class: classes,
            dataset: { key: `x-${row}-${n}`, row, number: String(n) },
            'aria-label': `Mark ${where}`,
            onclick: () => ctx.act(action),
          },
          n,
        );
      }
      const disabled = interactive && ctx.actions.length > 0;
      return h(
        'div.box',
        {
          class: classes,
          'aria-label': `${where}: open`,
          'aria-disabled': disabled ? 'true' : null,
        },
        n,
      );
    });
    const lockLabel = locked
      ? 'locked by this player (counts as a mark)'
      : closed
        ? 'closed'
        : 'open';
    cells.push(
      h(
        'div.lock',
        {
          class: `c-${row} ${locked ? 'locked' : ''} ${closed ? 'closed' : ''}`,
          role: 'img',
          'aria-label': `${title(row)} lock: ${lockLabel}`,
          title: `lock: ${lockLabel}`,
          dataset: { lock: locked ? 'locked' : closed ? 'closed' : 'open' },
        },
        lockIcon(),
        locked || closed ? crossIcon() : null,
      ),
    );
    return h(
      'div.qwixx-row',
      {
        class: `c-${row} ${closed ? 'row-closed' : ''}`,
        role: 'group',
        'aria-label': `${title(row)} row`,
      },
      h('div.row-label', { class: `c-${row}` }, h('b', null, LETTER[row]), ` ${title(row)}`),
      cells,
    );
  });
  return h(
    'div.sheet.qwixx-sheet',
    { dataset: { sheet: String(seat) } },
    rows,
    failedBoxes(data.failed),
  );
}

function controls(ctx) {
  const view = ctx.view;
  const out = [];
  if (view.dice) {
    const faces = Object.entries(view.dice).map(([name, v]) =>
      die(name.startsWith('white') ? 'white' : name, v),
    );
    out.push(h('div.dice-line', { 'aria-label': 'the roll' }, faces));
  }
  const whiteSum = view.dice ? view.dice.white1 + view.dice.white2 : null;
  const pass = ctx.actions.find((a) => a.type === 'pass');
  if (ctx.actions.length) {
    const text =
      view.phase === 'white'
        ? `White dice: ${whiteSum}. Mark it in any row, or pass.`
        : 'Colour window: mark a white die plus a coloured die in that colour\u2019s row, or pass.';
    out.push(h('p.prompt', null, text));
  } else {
    out.push(h('p.prompt.waiting', null, waitingText(ctx)));
  }
  if (pass) out.push(actButton(ctx, 'Pass', pass, { dataset: { key: 'pass', action: 'pass' } }));
  return h('div.controls', null, out);
}

function waitingText(ctx) {
  const view = ctx.view;
  if (view.over) return 'The game is over.';
  if (ctx.seat !== null && view.answer) return 'Your answer is in; waiting for the others.';
  if (view.phase === 'colour') return `${seatName(ctx, view.active)} may use a coloured die.`;
  return `Waiting for ${(view.actors || []).map((s) => seatName(ctx, s)).join(', ') || 'the dice'}.`;
}

export function render(ctx) {
  return withSheets(ctx, [controls(ctx)], (s, mine) => sheet(ctx, s, mine));
}
