// The app: one connection, the hash route (#/ lobby, #/room/ID a room), the header.

import { h, replace, toast } from './dom.js';
import { LobbyView } from './lobby.js';
import { Connection, ServerError } from './dicehall.js';
import { RoomView } from './room.js';
import * as store from './store.js';

const CLIENT = 'dicehall-web/1.0';

const STATUS_TEXT = {
  connecting: 'connecting…',
  open: 'online',
  closed: 'offline: reconnecting…',
  replaced: 'opened elsewhere',
};

class App {
  constructor() {
    this.conn = new Connection({ key: store.getKey() }); // the same player on every visit
    this.claimed = new Map(); // room -> seat, given back by hello's tokens on this connection
    this.seated = new Set(); // rooms where this connection holds a seat
    this.watching = new Set(); // rooms this connection spectates
    this.view = null;
    this.games = null; // the `games` answer, asked once
    this.main = document.getElementById('app');
    this.statusEl = document.getElementById('conn-status');
    this.conn.onHandshake = () => this.handshake();
    this.conn.addEventListener('message', (e) => this.dispatch(e.detail));
    this.conn.addEventListener('status', (e) => this.showStatus(e.detail));
    window.addEventListener('hashchange', () => this.route());
    this.setupName();
  }

  start() {
    this.route();
    this.conn.connect();
  }

  /** The games the server offers (asked once per page). */
  async gameList() {
    if (!this.games) this.games = (await this.conn.request('games')).games;
    return this.games;
  }

  /** One game's description (options, presets, bots), or null. */
  async game(name) {
    return (await this.gameList()).find((g) => g.name === name) || null;
  }

  playerName() {
    return store.getName().trim().slice(0, 40);
  }

  setupName() {
    const input = document.getElementById('player-name');
    input.value = store.getName();
    input.addEventListener('change', () => {
      const name = input.value
        // control characters are what a name must not hold: matching them is the point
        // eslint-disable-next-line no-control-regex
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .trim()
        .slice(0, 40);
      input.value = name;
      store.setName(name);
    });
  }

  async handshake() {
    const { rooms, tokens } = store.tokens();
    const name = this.playerName();
    const fields = {
      client: CLIENT,
      features: ['progress'], // who has answered a shared window, as they do
      ...(name ? { name } : {}),
      ...(tokens.length ? { tokens } : {}),
    };
    let result;
    try {
      result = await this.conn.hello(fields);
    } catch (err) {
      if (!(err instanceof ServerError && err.name === 'bad-key')) throw err;
      // this server does not know the player this browser was (another deployment here
      // now, or it lost its secret): a new player, kept from now on
      store.forgetKey();
      this.conn.key = null;
      result = await this.conn.hello(fields);
    }
    if (this.conn.player) store.setKey(this.conn.player.key);
    this.seated.clear();
    this.watching.clear();
    this.claimed = new Map(result.seats.map((s) => [s.room, s.seat]));
    for (const i of result.rejected) store.forget(rooms[i]);
    await this.conn.ping(); // the clock offset, before any countdown is drawn
    if (this.view) await this.view.sync();
  }

  dispatch(msg) {
    if (msg.type === 'goodbye') {
      if (msg.code !== 1000) toast(`Server: ${msg.reason}`, 'info');
      return;
    }
    if (msg.type === 'error') {
      toast(msg.error.message, 'error');
      return;
    }
    if (msg.room && this.view && this.view.room === msg.room) this.view.onMessage(msg);
  }

  showStatus(status) {
    this.statusEl.textContent = STATUS_TEXT[status] || status;
    this.statusEl.dataset.status = status;
    document.body.dataset.conn = status;
    if (status === 'replaced') {
      replace(
        this.statusEl,
        'opened elsewhere ',
        h(
          'button.btn.small',
          { type: 'button', onclick: () => this.conn.connect() },
          'Take it back here',
        ),
      );
    }
  }

  route() {
    const match = /^#\/room\/([A-Za-z0-9_-]{1,32})$/.exec(location.hash);
    if (this.view) this.view.destroy();
    this.view = match ? new RoomView(this, match[1]) : new LobbyView(this);
    document.title = match ? `dicehall · room ${match[1]}` : 'dicehall';
    this.view.mount(this.main);
    if (this.conn.isReady) this.view.sync();
  }
}

const app = new App();
window.dicehall = app; // for the console and the browser tests
app.start();
