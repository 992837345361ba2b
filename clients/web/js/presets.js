// What a game's description (the `games` answer) offers a new room: its presets, the
// publisher's rules first, its option values and its default opponent.

/** The preset that holds the publisher's rules (docs/games/*.md), offered first. */
export const OFFICIAL = 'official';

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
export function presetNames(game) {
  return Object.keys(game.presets).sort((a, b) => (b === OFFICIAL) - (a === OFFICIAL));
}

/** A preset's name as a player reads it. */
export function presetTitle(name) {
  if (name === OFFICIAL) return 'Official rules (the publisher\u2019s)';
  return `Preset \u201c${name}\u201d`;
}

/** Option values in words: "reroll on, lock_after 5". */
export function valuesText(values) {
  return Object.entries(values)
    .map(([k, v]) => (typeof v === 'boolean' ? `${k} ${v ? 'on' : 'off'}` : `${k} ${v}`))
    .join(', ');
}

/** The rules a set of option values amounts to: a preset's name, 'default' or 'custom'. */
export function matchRules(game, values) {
  const same = (preset) => {
    const want = resolveOptions(game, preset);
    return Object.keys(want).every((k) => want[k] === values[k]);
  };
  for (const name of presetNames(game)) if (same(name)) return name;
  return same('') ? 'default' : 'custom';
}
