// The body of a room's page (`page`, the RoomView): the waiting room before the game,
// the game's own view and the other players during it, the results after it, and the log
// with the chat beside. Plain functions of the page's state; what they do on a click goes
// through the page's methods (`join`, `request`, `act`).

import { h } from './dom.js';
import { defaultBot } from './lobby.js';
import * as GAMES from './games/index.js';

/** Before the game: the seats, who may sit, and the host's buttons. */
export function waitingRoom(page) {
  const info = page.info;
  const open = info.seats.filter((s) => s.kind === 'open');
  const seated = page.mode === 'seat';
  const hosting = seated && info.host === page.seat; // only the host starts and adds bots
  const rows = info.seats.map((s) =>
    h(
      'tr',
      null,
      h('td', null, `Seat ${s.seat + 1}`),
      h(
        'td',
        null,
        s.kind === 'open'
          ? 'open'
          : `${s.name}${s.kind === 'bot' ? ' (house bot)' : ''}${s.seat === info.host ? ' (host)' : ''}`,
      ),
      h(
        'td',
        null,
        s.kind === 'open' && !seated
          ? h(
              'button.btn',
              {
                type: 'button',
                dataset: { key: `join-${s.seat}`, joinSeat: String(s.seat) },
                onclick: () => page.join(s.seat),
              },
              'Sit here',
            )
          : '',
      ),
    ),
  );
  return h(
    'section.waiting',
    { 'aria-label': 'waiting for players' },
    h('h2', null, 'Waiting for players'),
    h(
      'p',
      null,
      open.length
        ? `${open.length} open seat${open.length > 1 ? 's' : ''}. ${hosting ? 'Share the link, or fill them with house bots.' : 'The host may fill them with house bots.'} The game starts when every seat is taken.`
        : hosting
          ? 'Every seat is taken.'
          : 'Every seat is taken: the host starts the game.',
    ),
    h('table.seat-table', null, h('tbody', null, rows)),
    hosting && open.length
      ? h(
          'div.button-row',
          null,
          h(
            'button.btn.primary',
            {
              type: 'button',
              dataset: { key: 'fill-bots' },
              onclick: async () => {
                const kind = defaultBot(await page.app.game(info.game));
                await page.request('add_bots', { kind }, 'House bots sat down.');
              },
            },
            'Fill the open seats with house bots',
          ),
        )
      : null,
    hosting && !open.length
      ? h(
          'button.btn.primary',
          { type: 'button', dataset: { key: 'start' }, onclick: () => page.request('start', {}) },
          'Start the game',
        )
      : null,
    logPanel(page),
  );
}

/** During the game: its own view, the other players and the log. */
export function gameArea(page) {
  const info = page.info;
  const ctx = {
    view: page.view,
    actions: page.busy || page.mode !== 'seat' ? [] : page.actions,
    seat: page.seat,
    names: info.seats.map((s) => s.name),
    info,
    local: page.local,
    act: (action) => page.act(action),
    rerender: () => page.render(),
  };
  const { main, others } = GAMES[info.game].render(ctx);
  const over = page.ended && page.over ? overPanel(page) : null;
  return h(
    'div.room-body',
    null,
    h('div.play', { class: `game-${info.game}` }, over, main),
    h(
      'aside.side',
      null,
      others.length
        ? h(
            'div.others',
            { 'aria-label': 'the other players' },
            h('h2', null, 'Other players'),
            others,
          )
        : null,
      logPanel(page),
    ),
  );
}

function overPanel(page) {
  const over = page.over;
  const rows = over.scores.map((score, s) =>
    h(
      'tr',
      { class: over.winners.includes(s) ? 'winner' : '' },
      h('td', null, page.nameOf(s)),
      h('td.num', { dataset: { finalSeat: String(s) } }, String(score)),
      h('td', null, over.winners.includes(s) ? '★ winner' : ''),
    ),
  );
  return h(
    'section.game-over',
    { 'aria-label': 'game over', dataset: { key: 'over' } },
    h('h2', null, 'Game over'),
    h(
      'table.final',
      null,
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'Player'), h('th', null, 'Score'), h('th', null, '')),
      ),
      h('tbody', null, rows),
    ),
    over.seed
      ? h(
          'p.small',
          null,
          'Dice seed (check: its SHA-256 is the commitment): ',
          h('code', null, over.seed),
        )
      : null,
    h(
      'div.button-row',
      null,
      h(
        'a.btn.primary',
        {
          href: `/api/rooms/${page.room}/record`,
          download: `dicehall-${page.room}.json`,
          id: 'download-record',
          dataset: { key: 'record' },
        },
        'Download the game record',
      ),
      h('a.btn', { href: '#/', dataset: { key: 'lobby' } }, 'Back to the lobby'),
    ),
  );
}

function logPanel(page) {
  const input = h('input', {
    id: 'chat-text',
    maxLength: 500,
    placeholder: 'Say something…',
    'aria-label': 'chat message',
    autocomplete: 'off',
  });
  const send = async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if (await page.request('chat', { text })) input.value = '';
  };
  const canChat = page.mode !== null;
  return h(
    'section.log',
    { 'aria-label': 'what happened' },
    h('h2', null, 'Log'),
    h(
      'ol.log-list',
      { 'aria-live': 'polite', 'data-scroll': 'log', dataset: { keepScroll: 'no' } },
      page.log
        .slice(-200)
        .map((e) => h('li', { class: `log-${e.kind}`, dataset: { seq: String(e.seq) } }, e.text)),
    ),
    canChat
      ? h('form.chat', { onsubmit: send }, input, h('button.btn.small', { type: 'submit' }, 'Send'))
      : null,
  );
}
