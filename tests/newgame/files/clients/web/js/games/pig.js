// Pig: roll one or two dice for the pot, or bank it; a 1 loses it.

import { h } from '../dom.js';
import { actButton, findAction, seatName, withSheets } from './common.js';

/** The game's title, as the server's `games` names it (rules/pig/__init__.py). */
export const TITLE = 'Pig';

function controls(ctx) {
  const view = ctx.view;
  const roll = (n) => findAction(ctx.actions || [], (a) => a.type === 'roll' && a.count === n);
  const bank = findAction(ctx.actions || [], (a) => a.type === 'bank');
  return h('div.controls', null, [
    h(
      'p.prompt',
      null,
      `${seatName(ctx, view.turn)}: pot ${view.pot}, dice ${view.dice.join(' ')}`,
    ),
    actButton(ctx, 'Roll 1', roll(1)),
    actButton(ctx, 'Roll 2', roll(2)),
    actButton(ctx, 'Bank', bank),
  ]);
}

export function render(ctx) {
  return withSheets(ctx, [controls(ctx)], (s) =>
    h('p.sheet', null, `${seatName(ctx, s)}: ${ctx.view.scores[s]}`),
  );
}
