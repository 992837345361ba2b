// The app: one connection, the hash route (#/ lobby, #/room/ID a room, #/games my games,
// #/games/ID/replay a replay, #/leaderboards[/LADDER] the boards), the header.

import { ApiError, getJSON } from './api.js';
import { h, replace, toast } from './dom.js';
import { LeaderboardView } from './leaderboard.js';
import { LobbyView } from './lobby.js';
import { Connection, ServerError } from './dicehall.js';
import { MyGamesView } from './mygames.js';
import { cleanName, houseBotName } from './names.js';
import { ReplayView } from './replay.js';
import { RoomView } from './room.js';
import * as store from './store.js';

const CLIENT = 'dicehall-web/1.0';

/** hash route -> [the view, the page's title, the navigation link it belongs to]. */
const ROUTES = [
  [/^#\/room\/([A-Za-z0-9_-]{1,32})$/, (app, m) => new RoomView(app, m[1]), (m) => `room ${m[1]}`],
  [
    /^#\/games\/([A-Za-z0-9_.:-]{1,100})\/replay(?:\?(.*))?$/,
    (app, m) => new ReplayView(app, m[1], m[2]),
    (m) => `replay of ${m[1]}`,
    'games',
  ],
  [/^#\/games(?:\?(.*))?$/, (app, m) => new MyGamesView(app, m[1]), () => 'my games', 'games'],
  [
    /^#\/leaderboards(?:\/([A-Za-z0-9_.:-]{1,100}))?(?:\?(.*))?$/,
    (app, m) => new LeaderboardView(app, m[1] || null, m[2]),
    () => 'leaderboards',
    'leaderboards',
  ],
];

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
    this.ladderList = null; // /api/leaderboards, asked once
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

  /** This browser's player id on this server (null: the server gave none). */
  playerId() {
    return this.conn.player ? this.conn.player.id : null;
  }

  /** The leaderboards (/api/leaderboards: a game's default rules and its presets). */
  async ladders() {
    if (!this.ladderList) this.ladderList = (await getJSON('/api/leaderboards')).ladders;
    return this.ladderList;
  }

  /**
   * Whether this server keeps history at all (a 404 from the API may also mean "no such
   * game"): a leaderboard answers 200 when it does, 404 when not (`--db none`). A 503 (its
   * database away) is thrown.
   */
  async historyKept() {
    const ladders = await this.ladders();
    if (!ladders.length) return false;
    try {
      await getJSON(`/api/leaderboards/${encodeURIComponent(ladders[0].ladder)}?limit=1`);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }

  playerName() {
    const name = cleanName(store.getName(), 40); // (a name kept before the rules: no refusal)
    return houseBotName(name) ? '' : name;
  }

  setupName() {
    const input = document.getElementById('player-name');
    input.value = store.getName();
    input.addEventListener('change', () => {
      const name = cleanName(input.value, 40);
      if (houseBotName(name)) {
        toast(`"${name}" is of the house bots' form (strong-bot-1): choose another name`, 'error');
        input.value = store.getName();
        return;
      }
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
    if (this.view) this.view.destroy();
    let found = null;
    for (const [pattern, make, title, nav] of ROUTES) {
      const match = pattern.exec(location.hash);
      if (match) {
        found = { view: make(this, match), title: title(match), nav };
        break;
      }
    }
    this.view = found ? found.view : new LobbyView(this);
    document.title = found ? `dicehall · ${found.title}` : 'dicehall';
    const nav = found ? found.nav || null : 'lobby';
    for (const link of document.querySelectorAll('.nav a')) {
      if (link.dataset.nav === nav) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    this.view.mount(this.main);
    if (this.conn.isReady) this.view.sync();
  }
}

const app = new App();
window.dicehall = app; // for the console and the browser tests
app.start();
