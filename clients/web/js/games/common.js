// Shared pieces of the game views: colour names with letters (colour is never the only
// cue), dice faces, per-seat panels and the buttons that send legal actions.

import { h } from '../dom.js';

export const LETTER = {
  red: 'R',
  orange: 'O',
  yellow: 'Y',
  green: 'G',
  blue: 'B',
  purple: 'P',
  white: 'W',
};

export function title(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** A die: its colour as a class (with a pattern) and as a letter, its value as pips and text. */
export function die(colour, value, attrs = {}) {
  const letter = LETTER[colour] || '';
  const label = `${colour} die${value ? ` showing ${value}` : ''}`;
  return h(
    'span.die',
    { class: `c-${colour}`, 'aria-label': label, title: label, role: 'img', ...attrs },
    h('span.die-value', { 'aria-hidden': 'true' }, value ?? '·'),
    letter ? h('span.die-letter', { 'aria-hidden': 'true' }, letter) : null,
  );
}

/** Canonical comparison of actions: legal actions come back exactly as the engine lists them. */
export function sameAction(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function findAction(actions, predicate) {
  return actions.find(predicate) || null;
}

/** A button that sends one legal action, or a disabled one when `action` is null. */
export function actButton(ctx, label, action, attrs = {}) {
  return h(
    'button.btn',
    {
      type: 'button',
      disabled: !action,
      onclick: action ? () => ctx.act(action) : null,
      ...attrs,
    },
    label,
  );
}

export function seatName(ctx, seat) {
  if (seat === null || seat === undefined) return '?';
  if (seat === ctx.seat) return 'You';
  return ctx.names[seat] || `Seat ${seat}`;
}

/** Panel around one seat's sheet: name, score, and whether it is this seat's move. */
export function seatPanel(ctx, seat, body, extra = null) {
  const acting = (ctx.view.actors || []).includes(seat);
  const score = ctx.view.scores ? ctx.view.scores[seat] : null;
  return h(
    'section.seat-panel',
    {
      class: [seat === ctx.seat ? 'mine' : '', acting ? 'acting' : ''].join(' '),
      'aria-label': `${seatName(ctx, seat)}: sheet`,
      dataset: { seat: String(seat) },
    },
    h(
      'header.seat-head',
      null,
      h(
        'span.seat-name',
        null,
        seat === ctx.seat ? `${ctx.names[seat] || 'You'} (you)` : seatName(ctx, seat),
      ),
      acting ? h('span.badge.acting', null, 'to move') : null,
      extra,
      score !== null
        ? h('span.seat-score', { dataset: { scoreSeat: String(seat) } }, `${score} pts`)
        : null,
    ),
    body,
  );
}

/** The other seats, in seat order, each drawn by `draw(seat)`. */
export function othersOf(ctx, draw) {
  const seats = ctx.view.seats || 0;
  const out = [];
  for (let s = 0; s < seats; s++) if (s !== ctx.seat) out.push(seatPanel(ctx, s, draw(s)));
  return out;
}

/**
 * The seats' sheets, each drawn by `draw(seat, mine)`: a seated player's own goes into
 * `main` and the others' beside it; a spectator has none of their own, so every seat's
 * goes into the main (wide) column, side by side as it has room (issue 33).
 */
export function withSheets(ctx, main, draw) {
  const me = ctx.seat;
  if (me === null || me === undefined) {
    const all = othersOf(ctx, (s) => draw(s, false));
    main.push(h('div.others.all-sheets', { 'aria-label': 'the players' }, all));
    return { main, others: [] };
  }
  main.push(seatPanel(ctx, me, draw(me, true)));
  return { main, others: othersOf(ctx, (s) => draw(s, false)) };
}

export function failedBoxes(count, label = 'Failed throws') {
  const boxes = [];
  for (let i = 1; i <= 4; i++) {
    boxes.push(
      h('span.fail-box', { class: i <= count ? 'used' : '' }, i <= count ? '✕' : String(i)),
    );
  }
  return h(
    'div.failed',
    { 'aria-label': `${label}: ${count} of 4` },
    h('span.failed-label', null, label),
    boxes,
  );
}
