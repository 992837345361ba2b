// The history's read-only HTTP API (docs/history.md, "HTTP API"): JSON over fetch, with
// the answers a page tells a player about in words (no history kept, database away).

import { h } from './dom.js';

/** A failed request: `status` is the HTTP status (0: the server could not be reached). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * GET `path` (e.g. `/api/leaderboards`) as JSON, or throw ApiError. `key`: the player key
 * to prove being that player (a player's own list then has their private rooms' games).
 */
export async function getJSON(path, key = null) {
  const headers = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  let response;
  try {
    response = await fetch(path, { headers });
  } catch {
    throw new ApiError(0, 'the server could not be reached');
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON (a proxy's error page): the status says enough
  }
  if (!response.ok)
    throw new ApiError(response.status, (body && body.error) || response.statusText);
  return body;
}

/** What a page shows when history cannot be read, in a player's words. */
export function problemText(err) {
  if (err.status === 404) return 'This server keeps no game history.';
  if (err.status === 503 || err.status === 0)
    return 'The game history cannot be read right now (its database is out of reach): try again later.';
  return `The game history could not be read: ${err.message}`;
}

/**
 * A notice for a failed request (an ApiError, or a sentence): the reason and, when it may
 * pass, a button to try again.
 */
export function problemNotice(err, retry) {
  const text = typeof err === 'string' ? err : problemText(err);
  const passing = err.status === 503 || err.status === 0;
  return h(
    'div.notice.history-problem',
    { role: 'status', dataset: { problem: String(err.status ?? '') } },
    h('p', null, text),
    passing && retry
      ? h('button.btn', { type: 'button', dataset: { key: 'retry' }, onclick: retry }, 'Try again')
      : null,
    h('a.btn', { href: '#/' }, 'Back to the lobby'),
  );
}

/** "12 Mar 2026, 14:05" in the reader's locale, from unix milliseconds. */
export function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "1st", "2nd", "3rd", "4th", ... */
export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : { 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] || 'th';
  return `${n}${suffix}`;
}

/** A rating as boards show it: one decimal. */
export function rating(value) {
  return value.toFixed(1);
}

/** The route's query (`#/games?limit=5` -> {limit: '5'}). */
export function hashQuery(query) {
  return Object.fromEntries(new URLSearchParams(query || ''));
}

/** A page size from the route's query (tests ask for small pages), else `fallback`. */
export function pageSize(query, fallback) {
  const n = Number(hashQuery(query).limit);
  return Number.isInteger(n) && n >= 1 && n <= 100 ? n : fallback;
}
