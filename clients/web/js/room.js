// One room on screen: membership (seat or spectator), the numbered message stream, the
// countdown, the log, and the game view. The seat's view and legal actions come from
// `legal` (the rules engine's own lists), so the page never guesses what is allowed.
// The stream's rules are in roomstream.js, the drawing in roomhead.js and roomdraw.js:
// this class holds the room's state and its requests.

import { h, replace, toast } from './dom.js';
import { Disconnected, ServerError, peek } from './dicehall.js';
import { overFromView, receive } from './roomstream.js';
import { drawTimer, roomHeader } from './roomhead.js';
import { gameArea, waitingRoom } from './roomdraw.js';
import * as store from './store.js';
import * as GAMES from './games/index.js';

export class RoomView {
  constructor(app, room) {
    this.app = app;
    this.conn = app.conn;
    this.room = room;
    const stored = store.seatOf(room);
    const saved = stored ? store.loadRoom(room) : null;
    this.seat = stored ? stored.seat : null;
    this.lastSeq = saved ? saved.lastSeq : 0;
    // the room's epoch as of lastSeq (docs/protocol.md, "Epochs"); null: not known
    this.roomEpoch = saved && typeof saved.epoch === 'number' ? saved.epoch : null;
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
    this.tick = setInterval(() => drawTimer(this), 250);
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
        // (with the room's epoch when the server takes it: the feature `epochs`)
        const result = await this.conn.resume(this.room, this.lastSeq, this.roomEpoch);
        this.roomEpoch = result.epoch ?? 0;
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
      this.roomEpoch = null;
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
    receive(this, msg);
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
    const { lastSeq, roomEpoch: epoch, info, over, turn, log, memo } = this;
    store.saveRoom(this.room, { lastSeq, epoch, info, over, turn, log, memo });
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
        if (!this.over) overFromView(this, snapshot.view);
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
    drawTimer(this);
    const body = [];
    if (info.status === 'open') body.push(waitingRoom(this));
    else if (this.view && GAMES[info.game]) body.push(gameArea(this));
    else body.push(h('p.loading', null, 'Loading the game…'));
    replace(root, roomHeader(this), this.timerEl, ...body);
    const log = root.querySelector('.log-list');
    if (log) log.scrollTop = log.scrollHeight;
  }
}
