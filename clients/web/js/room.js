// One room on screen: membership (seat or spectator), the numbered message stream, the
// countdown, the log, and the game view. The seat's view and legal actions come from
// `legal` (the rules engine's own lists), so the page never guesses what is allowed.

import { h, replace, toast } from './dom.js';
import { describeEvent, describeInfo, describeMessage, rememberView } from './describe.js';
import { Disconnected, ServerError, peek } from './dicehall.js';
import { defaultBot } from './lobby.js';
import * as store from './store.js';
import * as GAMES from './games/index.js';

/** The view of each game (`render(ctx)`), shared with the replay viewer. */

export class RoomView {
  constructor(app, room) {
    this.app = app;
    this.conn = app.conn;
    this.room = room;
    const stored = store.seatOf(room);
    const saved = stored ? store.loadRoom(room) : null;
    this.seat = stored ? stored.seat : null;
    this.lastSeq = saved ? saved.lastSeq : 0;
    this.info = saved ? saved.info : null;
    this.over = saved ? saved.over : null;
    this.turn = saved ? saved.turn : null;
    this.ended = Boolean(this.over);
    this.log = saved ? saved.log : [];
    this.logged = new Set(this.log.map((e) => e.seq));
    this.view = null;
    this.actions = [];
    this.legalWindow = null;
    this.legalCount = 0;
    this.mode = null; // what this connection holds: 'seat', 'watch' or null
    this.busy = false;
    this.epoch = 0;
    this.errors = 0;
    this.local = {};
    this.memo = (saved && saved.memo) || {}; // what the log's next lines need (describe.js)
    this.gone = null;
    this.refreshing = false;
    this.dirty = false;
    this.refreshTimer = null;
    this.persistTimer = null;
    this.drawPending = false; // a redraw is due at the next frame
    this.peekFailures = 0; // fresh views that did not come, in a row
    this.destroyed = false;
    this.backfillFrom = null;
    this.syncing = true; // until the resume or spectate answer sets where the stream starts
    this.early = [];
    this.root = h('section.room', { id: 'room', dataset: { room } });
    this.timerEl = h('div.turnbar', { role: 'timer', 'aria-live': 'off' });
    this.tick = setInterval(() => this.updateTimer(), 250);
    this.onHide = () => this.persist();
    window.addEventListener('pagehide', this.onHide);
  }

  mount(root) {
    replace(root, this.root);
    this.render();
  }

  destroy() {
    this.destroyed = true;
    clearInterval(this.tick);
    clearTimeout(this.refreshTimer);
    this.drawPending = false;
    window.removeEventListener('pagehide', this.onHide);
    this.persist();
    if (this.mode === 'watch' && this.app.watching.has(this.room)) {
      this.app.watching.delete(this.room);
      this.conn.request('leave', { room: this.room }).catch(() => {});
    }
  }

  // --- membership -------------------------------------------------------------------

  /** After every (re)connect: take the seat back and resume, or watch. */
  async sync() {
    const stored = store.seatOf(this.room);
    this.mode = null;
    this.actions = [];
    this.syncing = true;
    this.early = [];
    try {
      if (stored && (this.app.claimed.has(this.room) || this.app.seated.has(this.room))) {
        this.seat = stored.seat;
        this.mode = 'seat';
        const result = await this.conn.request('resume', {
          room: this.room,
          last_seq: this.lastSeq,
        });
        this.app.claimed.delete(this.room);
        this.app.seated.add(this.room);
        this.endSync(result.seq);
        this.conn.follow(result.url);
        if (result.mode === 'snapshot' && this.lastSeq > 0) {
          this.note('You are back: what happened while you were away is not in this log.');
        }
        this.scheduleRefresh(0);
      } else {
        if (stored) {
          store.forget(this.room);
          this.seat = null;
          toast('Your seat in this room could not be taken back.', 'error');
        }
        await this.watch();
        this.endSync(null);
      }
    } catch (err) {
      this.failed(err);
      this.endSync(null);
    }
    this.render();
  }

  /**
   * The resume answer came (as of `seq`): what reached this page before it was delivered
   * before the catch-up began, so it is all re-sent by the catch-up. Keep only what
   * continues the stream (a server may send the catch-up before the answer), drop the rest.
   */
  endSync(seq) {
    this.syncing = false;
    const early = this.early.sort((a, b) => a.seq - b.seq);
    this.early = [];
    if (seq === null) return;
    for (const msg of early)
      if (msg.seq === this.lastSeq + 1 && msg.seq <= seq) this.onMessage(msg);
  }

  async watch() {
    this.mode = 'watch';
    if (!this.app.watching.has(this.room)) {
      // what happens between the last message seen and the snapshot is logged afterwards
      if (this.lastSeq > 0) this.backfillFrom = this.lastSeq;
      const result = await this.conn.request('spectate', { room: this.room });
      this.app.watching.add(this.room);
      this.conn.follow(result.url);
    }
  }

  failed(err) {
    if (err instanceof Disconnected) return;
    if (err.name === 'no-such-room') {
      this.gone = 'This room does not exist (any more).';
      if (store.seatOf(this.room)) store.forget(this.room);
    } else {
      toast(err.message, 'error');
    }
  }

  async join(seat) {
    const name = this.app.playerName();
    this.syncing = true; // the join's snapshot starts the stream anew
    try {
      if (this.app.watching.has(this.room)) {
        await this.conn.request('leave', { room: this.room });
        this.app.watching.delete(this.room);
      }
      const result = await this.conn.request('join', {
        room: this.room,
        seat,
        ...(name ? { name } : {}),
      });
      store.saveSeat(this.room, result.seat, result.token);
      this.app.seated.add(this.room);
      this.conn.follow(result.url);
      this.seat = result.seat;
      this.mode = 'seat';
      this.log = [];
      this.logged = new Set();
      this.lastSeq = 0; // the snapshot that follows sets it
      this.endSync(null);
      this.note(`You sit down in seat ${result.seat + 1}.`);
    } catch (err) {
      this.endSync(null);
      this.failed(err);
      if (!this.app.watching.has(this.room) && this.mode !== 'seat')
        await this.watch().catch(() => {});
    }
    this.render();
  }

  async request(type, fields, ok) {
    try {
      const result = await this.conn.request(type, { room: this.room, ...fields });
      if (ok) toast(ok);
      return result;
    } catch (err) {
      this.failed(err);
      return null;
    }
  }

  // --- the message stream -------------------------------------------------------------

  onMessage(msg) {
    if (msg.type === 'progress') {
      this.progress(msg);
      return;
    }
    if (this.syncing && msg.type !== 'snapshot') {
      this.early.push(msg);
      return;
    }
    if (msg.type === 'snapshot') {
      this.snapshot(msg);
      return;
    }
    if (msg.seq <= this.lastSeq) {
      this.backfill(msg);
      return;
    }
    this.lastSeq = msg.seq;
    this.apply(msg, true);
    this.persistSoon();
    if (msg.type !== 'chat') this.scheduleRefresh();
    this.renderSoon();
  }

  /** Who has answered the open window: a hint as of its seq, dropped when not current. */
  progress(msg) {
    if (this.syncing || msg.seq !== this.lastSeq) return;
    if (!this.turn || this.turn.window !== msg.window) return;
    const actors = this.turn.actors.filter((a) => !msg.answered.includes(a.seat));
    this.turn = { ...this.turn, actors };
    this.scheduleRefresh(); // the view lists who answered (and hides what)
    this.renderSoon();
  }

  snapshot(msg) {
    const before = this.lastSeq;
    this.info = msg.info;
    rememberView(msg.info.game, msg.view, this.memo);
    this.view = Object.keys(msg.view).length ? msg.view : null;
    this.turn = msg.turn;
    this.lastSeq = msg.seq;
    if (msg.view && msg.view.over && !this.over) this.overFromView(msg.view);
    if (this.backfillFrom !== null && msg.seq > this.backfillFrom && this.backfillFrom > 0) {
      // the messages between leaving and watching again are in the snapshot's state, not in
      // the log yet: ask for them (they are only logged, see backfill)
      const from = this.backfillFrom;
      this.conn.request('resume', { room: this.room, last_seq: from }).catch(() => {});
    } else if (before === 0 && this.log.length === 0) {
      this.note(
        this.mode === 'seat' && this.seat !== null
          ? `You joined the room (seat ${this.seat + 1}).`
          : 'You are watching the room.',
      );
    }
    this.backfillFrom = null;
    if (this.mode === 'seat') this.scheduleRefresh(0);
    this.persistSoon();
    this.renderSoon();
  }

  overFromView(view) {
    this.over = {
      scores: view.scores,
      winners: view.winners || [],
      seed: null,
      commitment: this.info.commitment,
    };
  }

  /** A message at or below lastSeq: already reflected in the state; log it if it is missing. */
  backfill(msg) {
    if (this.logged.has(msg.seq) || msg.type === 'snapshot') return;
    this.apply(msg, false);
    this.log.sort((a, b) => a.seq - b.seq);
    this.persistSoon();
    this.renderSoon();
  }

  apply(msg, live) {
    const nameOf = (s) => this.nameOf(s);
    const game = this.info ? this.info.game : '';
    const lines = [];
    switch (msg.type) {
      case 'room':
        if (live) {
          lines.push(...describeInfo(this.info, msg.info));
          this.info = msg.info;
        }
        break;
      case 'event': {
        const text = describeEvent(game, msg.event, nameOf, this.memo);
        if (text) lines.push(text);
        break;
      }
      case 'window':
        if (live) this.turn = { window: msg.window, deadline: msg.deadline, actors: msg.actors };
        break;
      case 'window_closed':
        if (live && this.turn && this.turn.window === msg.window) this.turn = null;
        break;
      case 'game_over':
        this.ended = true;
        if (live) {
          this.over = {
            scores: msg.scores,
            winners: msg.winners,
            seed: msg.seed,
            commitment: msg.commitment,
          };
          this.turn = null;
        }
        break;
      default:
        break;
    }
    const text = describeMessage(msg, nameOf, this.memo);
    if (text) lines.push(text);
    this.logged.add(msg.seq);
    for (const line of lines) this.log.push({ seq: msg.seq, text: line, kind: msg.type });
  }

  note(text) {
    this.log.push({ seq: this.lastSeq, text, kind: 'note' });
    this.persistSoon();
  }

  nameOf(seat) {
    if (seat === null || seat === undefined) return 'spectator';
    if (seat === this.seat) return 'You';
    const s = this.info && this.info.seats[seat];
    return (s && s.name) || `Seat ${seat + 1}`;
  }

  persistSoon() {
    if (this.persistTimer) return;
    this.persistTimer = setTimeout(() => this.persist(), 100);
  }

  persist() {
    clearTimeout(this.persistTimer);
    this.persistTimer = null;
    if (!store.seatOf(this.room)) return;
    const { lastSeq, info, over, turn, log, memo } = this;
    store.saveRoom(this.room, { lastSeq, info, over, turn, log, memo });
  }

  // --- view and legal actions ------------------------------------------------------------

  scheduleRefresh(delay = null) {
    if (this.destroyed) return;
    this.dirty = true;
    if (this.refreshTimer) return;
    const wait = delay ?? (this.mode === 'watch' ? 150 : 20);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.refresh();
    }, wait);
  }

  async refresh() {
    if (this.refreshing) return; // the running one sees `dirty` and goes again
    this.refreshing = true;
    try {
      while (this.dirty && this.mode) {
        this.dirty = false;
        await this.refreshOnce();
      }
    } finally {
      this.refreshing = false;
    }
    this.render();
  }

  async refreshOnce() {
    if (!this.info || this.info.status === 'open') return;
    if (this.info.status === 'over') this.ended = true;
    if (this.mode === 'seat' && this.info.status === 'playing' && !this.ended) {
      const epoch = this.epoch;
      try {
        const result = await this.conn.request('legal', { room: this.room });
        if (epoch !== this.epoch || this.busy) {
          this.dirty = true; // an action went out meanwhile: this answer may be stale
          return;
        }
        this.view = result.view;
        this.actions = result.actions;
        this.legalWindow = result.window;
        this.legalCount += 1;
      } catch (err) {
        if (err.name === 'game-over') {
          this.ended = true;
          this.dirty = true;
        } else if (err.name !== 'not-started') this.failed(err);
      }
      return;
    }
    if (this.ended && this.view && this.view.over) return;
    this.actions = [];
    try {
      // a fresh public view on a short-lived second connection: the seat, or the watching,
      // on the main connection stays as it is (a spectator that left and came back could
      // find the room closed in between, once a game of house bots is over)
      const snapshot = await peek(this.room);
      if (!Object.keys(snapshot.view).length) return;
      this.view = snapshot.view;
      if (snapshot.view.over) {
        this.ended = true;
        if (!this.over) this.overFromView(snapshot.view);
      }
      this.peekFailures = 0;
      this.persistSoon();
    } catch (err) {
      // no snapshot (a busy page answered the server too late, the socket dropped): again,
      // a few times
      this.peekFailures += 1;
      if (err instanceof ServerError || this.peekFailures > 5) this.failed(err);
      else setTimeout(() => this.scheduleRefresh(0), 1000);
    }
  }

  async act(action) {
    if (this.busy) return;
    this.busy = true;
    this.epoch += 1;
    const window = this.legalWindow;
    this.actions = [];
    this.render();
    try {
      await this.conn.request('act', { room: this.room, window, action });
    } catch (err) {
      this.errors += 1;
      if (!(err instanceof Disconnected)) toast(`Not accepted: ${err.message}`, 'error');
    } finally {
      this.busy = false;
      this.epoch += 1;
      this.scheduleRefresh(0);
      this.render();
    }
  }

  // --- drawing ----------------------------------------------------------------------------

  updateTimer() {
    const turn = this.turn;
    const status = this.info ? this.info.status : null;
    if (!turn || status !== 'playing') {
      replace(
        this.timerEl,
        status === 'over' ? 'Game over' : status === 'open' ? 'Waiting for players' : '',
      );
      this.timerEl.dataset.mine = 'no';
      return;
    }
    const left = Math.max(0, turn.deadline - this.conn.now);
    const secs = Math.ceil(left / 1000);
    const total = (this.info.turn_window || 30) * 1000;
    const mine = turn.actors.some((a) => a.seat === this.seat) && this.mode === 'seat';
    const who = mine
      ? 'Your move'
      : `Waiting for ${turn.actors.map((a) => this.nameOf(a.seat)).join(', ')}`;
    this.timerEl.dataset.mine = mine ? 'yes' : 'no';
    this.timerEl.classList.toggle('urgent', secs <= 5);
    replace(
      this.timerEl,
      h('span.turn-who', null, who),
      h('span.turn-left', { dataset: { seconds: String(secs) } }, `${secs} s`),
      h(
        'span.turn-track',
        { 'aria-hidden': 'true' },
        h('span.turn-fill', { style: { width: `${Math.min(100, (100 * left) / total)}%` } }),
      ),
    );
    this.timerEl.setAttribute('aria-label', `${who}: ${secs} seconds left`);
  }

  /**
   * Redraw at the next frame: a burst of room messages (a game of house bots runs a
   * thousand in a second) is drawn once, not once per message.
   */
  renderSoon() {
    if (this.drawPending) return;
    this.drawPending = true;
    const draw = () => {
      if (this.drawPending) this.render();
    };
    requestAnimationFrame(draw);
    setTimeout(draw, 250); // (a hidden tab gets no frames)
  }

  render() {
    this.drawPending = false;
    const root = this.root;
    const info = this.info;
    const mine = this.actions.length > 0 && !this.busy && this.mode === 'seat';
    Object.assign(root.dataset, {
      game: info ? info.game : '',
      status: info ? info.status : '',
      seat: this.seat === null ? '' : String(this.seat),
      mode: this.mode || '',
      mine: mine ? '1' : '0',
      legal: String(this.legalCount),
      window: String(this.legalWindow ?? ''),
      errors: String(this.errors),
      over: this.over && this.view && this.view.over ? '1' : '0',
    });
    if (this.gone) {
      replace(
        root,
        h(
          'div.notice',
          null,
          h('p', null, this.gone),
          h('a.btn', { href: '#/' }, 'Back to the lobby'),
        ),
      );
      return;
    }
    if (!info) {
      replace(root, h('p.loading', null, 'Connecting to the room…'));
      return;
    }
    this.updateTimer();
    const body = [];
    if (info.status === 'open') body.push(this.waitingRoom());
    else if (this.view && GAMES[info.game]) body.push(this.gameArea());
    else body.push(h('p.loading', null, 'Loading the game…'));
    replace(root, this.header(), this.timerEl, ...body);
    const log = root.querySelector('.log-list');
    if (log) log.scrollTop = log.scrollHeight;
  }

  header() {
    const info = this.info;
    const link = `${location.origin}${location.pathname}#/room/${this.room}`;
    const scores = this.view && this.view.scores;
    return h(
      'header.room-head',
      null,
      h(
        'div.room-title',
        null,
        h('h1', null, info.name),
        h('span.tag', null, GAMES[info.game]?.TITLE || info.game),
        h('span.tag', { class: `status-${info.status}` }, info.status),
        this.seat !== null
          ? h('span.tag.you', null, `you: seat ${this.seat + 1}`)
          : h('span.tag', null, 'watching'),
      ),
      h(
        'ul.seats',
        { 'aria-label': 'seats' },
        info.seats.map((s) =>
          h(
            'li.seat',
            {
              class: [s.kind, s.connected ? 'on' : 'off', s.seat === this.seat ? 'me' : ''].join(
                ' ',
              ),
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

  waitingRoom() {
    const info = this.info;
    const open = info.seats.filter((s) => s.kind === 'open');
    const seated = this.mode === 'seat';
    const hosting = seated && info.host === this.seat; // only the host starts and adds bots
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
                  onclick: () => this.join(s.seat),
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
                  const kind = defaultBot(await this.app.game(info.game));
                  await this.request('add_bots', { kind }, 'House bots sat down.');
                },
              },
              'Fill the open seats with house bots',
            ),
          )
        : null,
      hosting && !open.length
        ? h(
            'button.btn.primary',
            { type: 'button', dataset: { key: 'start' }, onclick: () => this.request('start', {}) },
            'Start the game',
          )
        : null,
      this.logPanel(),
    );
  }

  gameArea() {
    const info = this.info;
    const ctx = {
      view: this.view,
      actions: this.busy || this.mode !== 'seat' ? [] : this.actions,
      seat: this.seat,
      names: info.seats.map((s) => s.name),
      info,
      local: this.local,
      act: (action) => this.act(action),
      rerender: () => this.render(),
    };
    const { main, others } = GAMES[info.game].render(ctx);
    const over = this.ended && this.over ? this.overPanel() : null;
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
        this.logPanel(),
      ),
    );
  }

  overPanel() {
    const over = this.over;
    const rows = over.scores.map((score, s) =>
      h(
        'tr',
        { class: over.winners.includes(s) ? 'winner' : '' },
        h('td', null, this.nameOf(s)),
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
            href: `/api/rooms/${this.room}/record`,
            download: `dicehall-${this.room}.json`,
            id: 'download-record',
            dataset: { key: 'record' },
          },
          'Download the game record',
        ),
        h('a.btn', { href: '#/', dataset: { key: 'lobby' } }, 'Back to the lobby'),
      ),
    );
  }

  logPanel() {
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
      if (await this.request('chat', { text })) input.value = '';
    };
    const canChat = this.mode !== null;
    return h(
      'section.log',
      { 'aria-label': 'what happened' },
      h('h2', null, 'Log'),
      h(
        'ol.log-list',
        { 'aria-live': 'polite', 'data-scroll': 'log', dataset: { keepScroll: 'no' } },
        this.log
          .slice(-200)
          .map((e) => h('li', { class: `log-${e.kind}`, dataset: { seq: String(e.seq) } }, e.text)),
      ),
      canChat
        ? h(
            'form.chat',
            { onsubmit: send },
            input,
            h('button.btn.small', { type: 'submit' }, 'Send'),
          )
        : null,
    );
  }
}
