// One line of the room log per room message: what happened, in words (a player's words,
// never the protocol's).

import * as GAMES from './games/index.js';

/** A game's own words for its log (its view module's `LOG`), none for a game without. */
function own(game) {
  return (GAMES[game] && GAMES[game].LOG) || {};
}

const SYMBOL = { circle: '●', square: '■', diamond: '◆', star: '✶', clover: '♣', cross: '✚' };

function tiles(list) {
  return list
    .map((t) => `${t.color} ${t.shape}${t.x !== undefined ? ` at ${t.x},${t.y}` : ''}`)
    .join(', ');
}

/** "white 3 and 5, red 2, yellow 6": the two white dice (white1, white2) read as one. */
function dice(map) {
  const whites = Object.entries(map)
    .filter(([c]) => c.startsWith('white'))
    .map(([, v]) => v);
  const colours = Object.entries(map)
    .filter(([c]) => !c.startsWith('white'))
    .map(([c, v]) => `${c} ${v}`);
  return [whites.length ? `white ${whites.join(' and ')}` : null, ...colours]
    .filter(Boolean)
    .join(', ');
}

/** "3, 3 and 6": a list read out, its last two joined by "and". */
function listed(items) {
  return items.length > 1
    ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`
    : items.join('');
}

/**
 * A Yamb roll: `hold` is the positions (0..5) of the dice kept, so the line says their
 * values (from the seat's last roll, `memo.dice`) and which dice they are, counted from 1
 * as on the page: "rolls again, keeping 3 and 4 (dice 1 and 2)".
 */
function yambRoll(hold, last) {
  if (!hold || !hold.length) return 'rolls';
  const which = `${hold.length > 1 ? 'dice' : 'die'} ${listed(hold.map((i) => i + 1))}`;
  if (!last) return `rolls again, keeping ${which}`;
  return `rolls again, keeping ${listed(hold.map((i) => last[i]))} (${which})`;
}

/** "Ann marks" but "You mark". */
function says(name, verb) {
  if (name !== 'You') return `${name} ${verb}`;
  const base = verb.replace(/^(\w+?)(es|s)\b/, (m, stem, end) =>
    end === 'es' && /(ss|sh|ch|x)$/.test(stem) ? stem : stem + (end === 'es' ? 'e' : ''),
  );
  return `You ${base}`;
}

function action(game, a, name, memo, seat) {
  switch (a.type) {
    case 'pass':
      return says(name, 'passes');
    case 'roll':
      if (own(game).roll) return says(name, own(game).roll(a));
      return says(name, yambRoll(a.hold, (memo.dice || {})[seat]));
    case 'reroll':
      return says(name, 'rolls the same dice again');
    case 'enter':
      return says(name, `writes ${memo.sum ?? ''} in ${a.row} box ${a.box + 1}`.replace('  ', ' '));
    case 'mark':
      return says(name, `marks ${a.row} ${a.number}`);
    case 'place':
      return says(name, `places ${tiles(a.tiles)}`);
    case 'swap':
      return says(
        name,
        a.tiles ? `swaps ${tiles(a.tiles)}` : `swaps ${a.count} tile${a.count === 1 ? '' : 's'}`,
      );
    case 'call':
      return says(name, `announces ${a.row} in the call column`);
    case 'write':
      return says(
        name,
        `writes ${memo.value ?? ''} in ${(own(game).columns || {})[a.column] || a.column}, row ${a.row}`.replace(
          '  ',
          ' ',
        ),
      );
    default:
      return `${name}: ${JSON.stringify(a)}`;
  }
}

/**
 * Text for a game event, or null for events that need no line (held answers). `memo`
 * carries what earlier events said that later ones leave out (the Qwinto sum, each Yamb
 * seat's dice): plain JSON, so the page keeps it with the log across a reload.
 */
export function describeEvent(game, e, nameOf, memo = {}) {
  const who = e.seat !== undefined ? nameOf(e.seat) : '';
  switch (e.type) {
    case 'answered':
      return null;
    case 'applied': {
      memo.value = e.value;
      let text = action(game, e.action, who, memo, e.seat);
      if (e.points !== undefined) text += ` for ${e.points} point${e.points === 1 ? '' : 's'}`;
      if (e.qwirkles) text += ` (Qwirkle ×${e.qwirkles}!)`;
      return text;
    }
    case 'rolled':
      if (own(game).sumsDice) memo.sum = Object.values(e.dice).reduce((a, b) => a + b, 0);
      if (Array.isArray(e.dice)) memo.dice = { ...memo.dice, [e.seat]: e.dice };
      if (Array.isArray(e.dice)) return `${who} rolled ${e.dice.join(' ')} (roll ${e.roll} of 3)`;
      return `Dice: ${dice(e.dice)}${own(game).sumsDice ? ` = ${Object.values(e.dice).reduce((a, b) => a + b, 0)}` : ''}`;
    case 'failed_throw':
      return `${who}: failed throw`;
    case 'turn':
      return `${who === 'You' ? 'Your' : `${who}\u2019s`} turn`;
    case 'round':
      return `Round ${e.round}`;
    case 'timeout':
      // the window_closed that follows marks the same default: it is not logged again
      memo.timedOut = [...(memo.timedOut || []), e.seat];
      return `${who} ran out of time`;
    case 'locked':
      return says(who, `locks ${e.row}`);
    case 'row_closed':
      return `The ${e.row} row is closed; its die leaves the game`;
    case 'drew':
      if (e.tiles)
        return `${who === 'You' ? 'You' : who} drew ${e.tiles.map((t) => `${t.color} ${SYMBOL[t.shape] || t.shape}`).join(', ')} (bag ${e.bag})`;
      return `${who} drew ${e.count} tile${e.count === 1 ? '' : 's'} (bag ${e.bag})`;
    case 'start':
      return says(who, `starts with a set of ${e.size}`);
    case 'bonus':
      return `${who} emptied the hand: +${e.points}`;
    case 'game_over':
      return `Final scores: ${e.scores.map((points, s) => `${nameOf(s)} ${points}`).join(', ')}`;
    default:
      return `${e.type}: ${JSON.stringify(e)}`;
  }
}

/**
 * Text for a room message other than `event` and `room`, or null. A window's time-outs are
 * logged once: by the game's `timeout` event when it sent one (`memo`), else here.
 */
export function describeMessage(msg, nameOf, memo = {}) {
  switch (msg.type) {
    case 'window_closed': {
      const logged = memo.timedOut || [];
      memo.timedOut = [];
      const late = msg.actions
        .filter((a) => a.default && !logged.includes(a.seat))
        .map((a) => nameOf(a.seat));
      return late.length ? `Time ran out for ${late.join(', ')}` : null;
    }
    case 'game_over':
      return `Game over. ${msg.winners.length > 1 ? 'Winners' : 'Winner'}: ${msg.winners.map(nameOf).join(', ')}`;
    case 'chat':
      return `${msg.from}: ${msg.text}`;
    default:
      return null;
  }
}

/**
 * What a snapshot's `view` tells that the events after it leave out (see describeEvent):
 * the page that joins, watches or comes back in the middle of a window logs the moves that
 * close it with their numbers all the same.
 */
export function rememberView(game, view, memo) {
  if (!view) return;
  if (own(game).remember) own(game).remember(view, memo);
}

/** What changed between two room infos, as log lines. */
export function describeInfo(before, after) {
  const lines = [];
  if (!before) return lines;
  if (before.status !== after.status) {
    if (after.status === 'playing') lines.push('The game starts.');
    if (after.status === 'over') lines.push('The room is closed.');
  }
  after.seats.forEach((s, i) => {
    const old = before.seats[i];
    if (!old) return;
    const name = s.name || `seat ${i}`;
    if (old.kind === 'open' && s.kind !== 'open')
      lines.push(`${name} sits down${s.kind === 'bot' ? ' (house bot)' : ''}.`);
    else if (old.kind !== 'open' && s.kind === 'open')
      lines.push(`${old.name || `seat ${i}`} leaves.`);
    else if (old.connected && !s.connected) lines.push(`${name} lost the connection.`);
    else if (!old.connected && s.connected) lines.push(`${name} is back.`);
  });
  const host = after.host ?? null;
  if (host !== (before.host ?? null) && host !== null)
    lines.push(`${after.seats[host].name || `seat ${host}`} now hosts the room.`);
  return lines;
}

/**
 * A stored game's log entry (docs/records.md, "--json": kind, seat, action, chance) in the
 * live log's words: "Ada marks yellow 10", "Dice: white 4 and 6, red 6", "Bo ran out of
 * time". An entry carries no events, so what they would have added is read from the game
 * as it stands after the entry (`views`, one per seat, as the replay API gives them): the
 * Qwinto sum entered, the Yamb value written, the number of a Yamb roll, the Qwirkle bag.
 */
export function describeEntry(game, entry, views, nameOf) {
  const memo = {};
  if (entry.kind === 'timeout')
    return describeEvent(game, { type: 'timeout', seat: entry.seat }, nameOf, memo);
  if (entry.kind === 'chance') {
    const c = entry.chance;
    const view = views[c.seat ?? 0] || views[0];
    if (c.tiles)
      return describeEvent(
        game,
        { type: 'drew', seat: c.seat, tiles: c.tiles, bag: view.bag },
        nameOf,
        memo,
      );
    const table = Array.isArray(c.dice) && view.tables ? view.tables[c.seat] : null;
    const rolled = { type: 'rolled', seat: c.seat, dice: c.dice, roll: table && table.rolls };
    return describeEvent(game, rolled, nameOf, memo);
  }
  const a = entry.action;
  const view = views[entry.seat] || views[0];
  let value;
  if (a.type === 'enter' && view.sheets)
    memo.sum = view.sheets[entry.seat].rows[a.row][a.box] ?? view.sum;
  if (a.type === 'write' && view.tables) value = view.tables[entry.seat].columns[a.column][a.row];
  // (a roll's outcome is the next entry: the dice of this one are those it keeps)
  if (a.type === 'roll' && view.tables) rememberView(game, view, memo);
  return describeEvent(game, { type: 'applied', seat: entry.seat, action: a, value }, nameOf, memo);
}

/** "Ada +3, Bo −5": what an entry changed in the scores, in seat order (null: nothing). */
export function describeDelta(entry, names) {
  const parts = names
    .map((name) => [name, (entry.delta || {})[name] || 0])
    .filter(([, d]) => d !== 0)
    .map(([name, d]) => `${name} ${d > 0 ? '+' : '\u2212'}${Math.abs(d)}`);
  return parts.length ? `Points: ${parts.join(', ')}` : null;
}
