// What a name may hold beyond its length (protocol/names.py; docs/protocol.md, "Names"):
// the page cleans what a person types so that the server never has to refuse it.

// Controls (C0 and C1), format characters (bidi overrides, zero-width spaces and joiners),
// surrogates, line and paragraph separators: they do not show, or they break the line.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
// The house bots' seat names (`strong-bot-1`) and player ids (`house:strong`).
const HOUSE_BOT = /^(?:[a-z0-9_.:-]*-bot-[0-9]+|house:.*)$/;

/** `text` without the characters a name may not hold, trimmed, at most `max` characters. */
export function cleanName(text, max) {
  const shown = text.replace(HIDDEN, '').trim();
  return Array.from(shown).slice(0, max).join('').trim(); // (code points, as the server counts)
}

/** Whether `name` would pass for a house bot's, in any case, width or spacing. */
export function houseBotName(name) {
  const folded = name
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/[\s_-]+/g, '-');
  return HOUSE_BOT.test(folded);
}
