// The top of a room's page (`page`, the RoomView): its name, tags and seats with their
// scores, the share link, and the turn bar's countdown (redrawn four times a second, so
// apart from the rest of the page).

import { h, replace, toast } from './dom.js';
import * as GAMES from './games/index.js';

/** The turn bar: whose move it is and the time left of the open window. */
export function drawTimer(page) {
  const turn = page.turn;
  const status = page.info ? page.info.status : null;
  if (!turn || status !== 'playing') {
    replace(
      page.timerEl,
      status === 'over' ? 'Game over' : status === 'open' ? 'Waiting for players' : '',
    );
    page.timerEl.dataset.mine = 'no';
    return;
  }
  const left = Math.max(0, turn.deadline - page.conn.now);
  const secs = Math.ceil(left / 1000);
  const total = (page.info.turn_window || 30) * 1000;
  const mine = turn.actors.some((a) => a.seat === page.seat) && page.mode === 'seat';
  const who = mine
    ? 'Your move'
    : `Waiting for ${turn.actors.map((a) => page.nameOf(a.seat)).join(', ')}`;
  page.timerEl.dataset.mine = mine ? 'yes' : 'no';
  page.timerEl.classList.toggle('urgent', secs <= 5);
  replace(
    page.timerEl,
    h('span.turn-who', null, who),
    h('span.turn-left', { dataset: { seconds: String(secs) } }, `${secs} s`),
    h(
      'span.turn-track',
      { 'aria-hidden': 'true' },
      h('span.turn-fill', { style: { width: `${Math.min(100, (100 * left) / total)}%` } }),
    ),
  );
  page.timerEl.setAttribute('aria-label', `${who}: ${secs} seconds left`);
}

/** The room's name and tags, its seats (with the scores), and the share link. */
export function roomHeader(page) {
  const info = page.info;
  const link = `${location.origin}${location.pathname}#/room/${page.room}`;
  const scores = page.view && page.view.scores;
  return h(
    'header.room-head',
    null,
    h(
      'div.room-title',
      null,
      h('h1', null, info.name),
      h('span.tag', null, GAMES[info.game]?.TITLE || info.game),
      h('span.tag', { class: `status-${info.status}` }, info.status),
      page.seat !== null
        ? h('span.tag.you', null, `you: seat ${page.seat + 1}`)
        : h('span.tag', null, 'watching'),
    ),
    h(
      'ul.seats',
      { 'aria-label': 'seats' },
      info.seats.map((s) =>
        h(
          'li.seat',
          {
            class: [s.kind, s.connected ? 'on' : 'off', s.seat === page.seat ? 'me' : ''].join(' '),
          },
          h(
            'span.dot',
            { 'aria-hidden': 'true' },
            s.kind === 'bot' ? '⚙' : s.connected ? '●' : s.kind === 'open' ? '' : '○',
          ),
          h('span.name', null, s.kind === 'open' ? `seat ${s.seat + 1}: open` : s.name),
          s.kind !== 'open' && !s.connected ? h('span.sr', null, ' (offline)') : null,
          scores ? h('span.score', null, ` ${scores[s.seat]}`) : null,
        ),
      ),
    ),
    h(
      'div.share',
      null,
      h('label', { for: 'share-link' }, 'Share'),
      h('input', {
        id: 'share-link',
        readOnly: true,
        value: link,
        onfocus: (e) => e.target.select(),
      }),
      h(
        'button.btn.small',
        {
          type: 'button',
          dataset: { key: 'copy-link' },
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(link);
              toast('Link copied.');
            } catch {
              const input = document.getElementById('share-link');
              input.focus();
              input.select();
              toast('Press Ctrl+C to copy the link.');
            }
          },
        },
        'Copy link',
      ),
    ),
  );
}
