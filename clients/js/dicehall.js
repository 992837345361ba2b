// A client of the dicehall wire protocol v1 (docs/protocol.md) for browsers and Node.
//
// One plain ES module with no dependencies: the web client imports it as it is, and so can
// a bot on Node (Node 22 has a WebSocket built in; on older ones the `ws` package's is
// loaded when the first connection opens). It speaks `dicehall.v1.json`: one reply per
// request, requests paced under the server's rate limit, reconnection with backoff (or the
// server's `retry_ms`), following a room to its server process, an application heartbeat
// that also measures the clock offset for countdowns, the open turn window of each room
// (`turn`), and `answer`, the reference's recipe for a turn.
// Types: dicehall.d.ts (with protocol.d.ts, generated from the JSON Schemas).

export const SUBPROTOCOL = 'dicehall.v1.json';
export const CLIENT = 'dicehall-js/1.0';
export const IDENTITY = 'identity'; // the optional feature: a player known across connections
export const EPOCHS = 'epochs'; // the optional feature: `resume` says the room's epoch

const HEARTBEAT_MS = 15000;
const PING_TIMEOUT_MS = 10000;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
const REPLACED = 4006; // another connection took this seat with its token
const PING_TIMEOUT_CLOSE = 4999; // our own code: the heartbeat went unanswered

/** An error reply: `code`, `name` (stable), `message` (for people), `rule` (illegal actions). */
export class ServerError extends Error {
  constructor(error) {
    super(error.message || error.name);
    this.code = error.code;
    this.name = error.name;
    this.rule = error.rule;
  }
}

/** The connection closed before the reply came; the request may or may not have been handled. */
export class Disconnected extends Error {
  constructor() {
    super('the connection dropped');
    this.name = 'disconnected';
  }
}

/** An Event with a payload: `CustomEvent` is not global on every Node this supports. */
class DetailEvent extends Event {
  constructor(type, detail) {
    super(type);
    this.detail = detail;
  }
}

/**
 * Keeps the client under the server's token bucket (`rate` a second, `burst`; from
 * `welcome.limits`), so that a fast bot is never refused with `rate-limited`. The server
 * counts arrivals, the client departures; arrivals can bunch up after a network hiccup,
 * so a margin of the burst is kept in reserve.
 */
class Pacer {
  constructor(rate, burst) {
    this.rate = rate / 1000; // tokens per ms
    this.capacity = Math.max(1, burst - Math.max(2, Math.floor(burst / 8)));
    this.tokens = this.capacity;
    this.last = Date.now();
  }

  refill() {
    const now = Date.now();
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.rate);
    this.last = now;
  }

  /** Milliseconds until a frame may go (0: now, and it is counted). */
  take() {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / this.rate);
  }

  /** The server said `rate-limited` anyway: its bucket is empty, so is ours now. */
  refused() {
    this.refill();
    this.tokens = Math.min(this.tokens, -1);
  }
}

/**
 * Loads a module by a name given at run time, and only on a Node without a WebSocket of its
 * own: a browser, or a bundler building for one, never sees these imports.
 */
const load = (name) => import(name);
let nodeWebSocket = null;

/**
 * The WebSocket class to use when none is given: the global one (browsers, Node 22 and
 * later), else the `ws` package's (Node 18 to 21), loaded once.
 */
function webSocketClass() {
  if (globalThis.WebSocket) return Promise.resolve(globalThis.WebSocket);
  nodeWebSocket ??= loadWs().catch((err) => {
    nodeWebSocket = null;
    throw err;
  });
  return nodeWebSocket;
}

async function loadWs() {
  const pick = (module) => module.WebSocket ?? module.default;
  try {
    return pick(await load('ws'));
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  }
  // Installed from a folder, this package is a link into the dicehall checkout and Node
  // resolves its imports from there, so `ws` is looked for from the bot's folder too.
  const { createRequire } = await load('node:module');
  const { pathToFileURL } = await load('node:url');
  const proc = globalThis.process;
  const folders = proc ? [proc.argv[1], `${proc.cwd()}/`] : [];
  for (const from of folders.filter(Boolean)) {
    let path;
    try {
      path = createRequire(from).resolve('ws');
    } catch {
      continue;
    }
    return pick(await load(pathToFileURL(path).href));
  }
  throw new Error(
    `this Node.js (${proc?.version}) has no WebSocket of its own (Node 22 and later have ` +
      'one): install the ws package next to your bot (npm install ws), or pass a WebSocket ' +
      "class as Connection's `WebSocket` option",
  );
}

/** A text frame's message (`ws` on Node hands text frames over as Buffers). */
function parse(data) {
  return JSON.parse(typeof data === 'string' ? data : String(data));
}

/** The WebSocket URL of the page's own server (`/ws` on the same host), in a browser. */
export function pageUrl() {
  const scheme = globalThis.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${globalThis.location.host}/ws`;
}

/**
 * One connection to a server, kept open: requests get their replies as promises; every
 * other server message is dispatched as a 'message' event (its `detail`).
 *
 * Events: 'status' (detail: connecting | open | closed | replaced), 'message', 'ready'
 * (after the handshake: `hello`, then whatever `onHandshake` does).
 */
export class Connection extends EventTarget {
  /**
   * @param {object} [options]
   * @param {string | (() => string)} [options.url] the server's WebSocket URL (default: the page's)
   * @param {typeof WebSocket} [options.WebSocket] the WebSocket class (default: the global
   *   one, else the `ws` package's)
   * @param {boolean} [options.reconnect] reopen a dropped connection (default: true)
   * @param {string | null} [options.key] a player key: `hello` says it, to be that player
   */
  constructor(options = {}) {
    super();
    this.home = options.url ?? pageUrl;
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket ?? null;
    this.loading = null; // the `ws` package's class on its way (Node before 22)
    this.reconnect = options.reconnect ?? true;
    /** The player key `hello` says (the one given, else the one the first `hello` got). */
    this.key = options.key ?? null;
    /** Who this connection plays as ({id, key}), once a `hello` said; null without one. */
    this.player = null;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject}, sent and waiting for the reply
    this.outbox = []; // requests waiting for the pacer, in order
    this.pacer = null;
    this.pumpTimer = null;
    this.status = 'closed';
    this.offset = 0; // server clock minus ours, ms
    this.backoff = FIRST_BACKOFF_MS;
    this.retryMs = null;
    this.timer = null;
    this.stopped = false;
    this.readyWaiters = []; // {resolve, reject}
    this.failure = null; // why no connection can be opened at all (no WebSocket class)
    this.isReady = false;
    this.welcome = null;
    this.goodbye = null;
    /** async (conn) => void: say hello (the first request), then resume; set by the app. */
    this.onHandshake = null;
    /** Where the room's own server process takes connections (null: the home server). */
    this.target = null;
    this.url = null;
    this.moving = false;
    this.turns = new Map(); // room -> the open turn window (or null), as of the latest message
    this.seqs = new Map(); // room -> the last seq received (a snapshot may set it lower)
    this.epochs = new Map(); // room -> its epoch, as the latest snapshot or resume reply said
    /** The optional features the latest `hello` turned on. */
    this.features = new Set();
  }

  /**
   * Open the connection and keep it open. Resolves once the socket is on its way; rejects
   * (and so does `ready()`) when there is no WebSocket class: on Node before 22 without the
   * `ws` package.
   */
  connect() {
    this.stopped = false;
    if (this.ws) return Promise.resolve();
    if (!this.WebSocket) {
      this.failure = null;
      this.loading ??= webSocketClass().then(
        (cls) => {
          this.WebSocket = cls;
          this.loading = null;
          if (!this.stopped) this.open();
        },
        (err) => {
          this.loading = null;
          this.failure = err;
          for (const waiter of this.readyWaiters.splice(0)) waiter.reject(err);
          throw err;
        },
      );
      return this.loading;
    }
    this.open();
    return Promise.resolve();
  }

  open() {
    if (this.ws) return;
    this.setStatus('connecting');
    this.url = this.target || (typeof this.home === 'function' ? this.home() : this.home);
    const ws = new this.WebSocket(this.url, [SUBPROTOCOL]);
    this.ws = ws;
    this.nextId = 1;
    this.welcome = null;
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = (e) => this.closed(ws, e.code);
    ws.onerror = () => {}; // onclose follows
  }

  /** Close for good: no reconnect. */
  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000, 'done');
  }

  /**
   * A reply said where the room is run (docs/protocol.md, "Following a room to its
   * server"): reconnect there, where no request has to cross between server processes.
   * The handshake takes the seats back with their tokens and resumes, as after any drop;
   * if that address cannot be reached, the next attempt goes back to the home server.
   */
  follow(url) {
    if (!url || url === this.url || !this.ws) return;
    this.target = url;
    this.moving = true;
    this.ws.close(1000, 'following the room to its server');
  }

  /** Close and reconnect, as a dropped network would make it (tests use it). */
  drop() {
    if (this.ws) this.ws.close(1000, 'client drop');
  }

  setStatus(status) {
    this.status = status;
    this.dispatchEvent(new DetailEvent('status', status));
  }

  /** The server's clock now, in unix ms (deadlines are on that clock). */
  get now() {
    return Date.now() + this.offset;
  }

  /**
   * Send a request, paced under the server's rate limit; resolves with its result, rejects
   * with ServerError or Disconnected. Requests go out in the order they were made.
   */
  request(type, fields = {}) {
    const ws = this.ws;
    if (!ws || ws.readyState !== this.WebSocket.OPEN) return Promise.reject(new Disconnected());
    const result = new Promise((resolve, reject) => {
      this.outbox.push({ type, fields, resolve, reject });
      this.pump();
    });
    if (type === 'resume') {
      return result.then((resumed) => {
        this.epochs.set(fields.room, resumed.epoch ?? 0); // (before the catch-up's messages)
        return resumed;
      });
    }
    if (type !== 'leave') return result;
    return result.then((left) => {
      this.turns.delete(fields.room);
      this.seqs.delete(fields.room);
      this.epochs.delete(fields.room);
      return left;
    });
  }

  /**
   * The epoch of `room` (docs/protocol.md, "Epochs") as of the latest message received:
   * what its latest snapshot or resume reply said; undefined before either.
   */
  epoch(room) {
    return this.epochs.get(room);
  }

  /**
   * `resume` the stream of `room` after `lastSeq`: with the feature `epochs` on, it says
   * the room's `epoch` as of that seq (default: the latest this connection knows), so that
   * a room a failover took back resumes with events wherever that is exact. Without the
   * feature the field is left out (a server refuses it).
   */
  resume(room, lastSeq, epoch = this.epochs.get(room)) {
    const fields = { room, last_seq: lastSeq };
    if (this.features.has(EPOCHS) && typeof epoch === 'number') fields.epoch = epoch;
    return this.request('resume', fields);
  }

  /** Send what the pacer lets through now; come back when the next token is due. */
  pump() {
    if (this.pumpTimer !== null) return;
    while (this.outbox.length) {
      const wait = this.pacer ? this.pacer.take() : 0;
      if (wait > 0) {
        this.pumpTimer = setTimeout(() => {
          this.pumpTimer = null;
          this.pump();
        }, wait);
        return;
      }
      const { type, fields, resolve, reject } = this.outbox.shift();
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ ...fields, type, id }));
    }
  }

  /** Resolves once the handshake of the current connection is done. */
  ready() {
    if (this.isReady) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /**
   * The turn window of `room` open as of the latest message received ({window, deadline,
   * actors}), or null: what a listener attached late (after the `window` came) acts on.
   */
  turn(room) {
    return this.turns.get(room) ?? null;
  }

  /** Keeps `turn(room)` up to date with a room message, before any listener sees it. */
  track(msg) {
    const room = msg.room;
    if (typeof room !== 'string' || typeof msg.seq !== 'number') return;
    const turn = this.turns.get(room) ?? null;
    if (msg.type === 'snapshot') {
      // whatever its seq: a lower one took the room back (a failover), and what came after
      // it never happened; the next messages continue from it
      this.seqs.set(room, msg.seq);
      this.epochs.set(room, msg.epoch ?? 0);
      this.turns.set(room, msg.turn ?? null);
      return;
    }
    if (msg.type === 'progress') {
      // a live hint that repeats the latest seq: the seats whose answer is in act no more
      if (turn && turn.window === msg.window) {
        const actors = turn.actors.filter((a) => !msg.answered.includes(a.seat));
        this.turns.set(room, { ...turn, actors });
      }
      return;
    }
    // a message replayed by a `resume` from an older seq is not news
    if (msg.seq <= (this.seqs.get(room) ?? 0)) return;
    this.seqs.set(room, msg.seq);
    if (msg.type === 'window') {
      const { window, deadline, actors } = msg;
      this.turns.set(room, { window, deadline, actors });
    } else if (msg.type === 'window_closed') {
      if (turn && turn.window === msg.window) this.turns.set(room, null);
    } else if (msg.type === 'game_over') {
      this.turns.set(room, null);
    }
  }

  receive(data) {
    let msg;
    try {
      msg = parse(data);
    } catch {
      return;
    }
    if (msg.type === 'reply') {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.ok) waiter.resolve(msg.result);
      else {
        if (msg.error.name === 'rate-limited' && this.pacer) this.pacer.refused();
        waiter.reject(new ServerError(msg.error));
      }
      return;
    }
    if (msg.type === 'welcome') {
      this.welcome = msg;
      const limits = msg.limits ?? {};
      this.pacer = limits.rate ? new Pacer(limits.rate, limits.burst ?? 1) : null;
      this.handshake();
      return;
    }
    if (msg.type === 'goodbye') {
      this.retryMs = msg.retry_ms ?? null;
      this.goodbye = msg;
    }
    this.track(msg);
    this.dispatchEvent(new DetailEvent('message', msg));
  }

  /**
   * Say `hello` (`fields` as `request` takes them; `client` defaults to CLIENT) as this
   * connection's player (docs/protocol.md, "identity"): `identity` and `epochs` are asked
   * for whenever the server offers them (`features`: the ones the reply turned on); with
   * `identity` it says `key` when there is one, and the reply's player is kept
   * (`player`, `key`), so that every later connection is the same player. The first
   * `hello` rejects with ServerError `bad-key` when the server did not sign the key given;
   * a later one (a reconnect to a server that does not know the player: another
   * deployment) goes on as a new player there.
   */
  async hello(fields = {}) {
    const offers = this.welcome?.features ?? [];
    const offered = offers.includes(IDENTITY);
    const always = [IDENTITY, EPOCHS]; // (an older server refuses `key` and `resume.epoch`)
    const features = (fields.features ?? []).filter((f) => !always.includes(f));
    features.push(...always.filter((f) => offers.includes(f)));
    const ask = (key) =>
      this.request('hello', {
        client: CLIENT,
        ...fields,
        ...(features.length ? { features } : {}),
        ...(offered && key ? { key } : {}),
      });
    let result;
    try {
      result = await ask(this.key);
    } catch (err) {
      if (!(err instanceof ServerError && err.name === 'bad-key' && this.player)) throw err;
      result = await ask(null); // a failed hello may come again on the same connection
    }
    this.player = result.player ?? null;
    if (this.player) this.key = this.player.key;
    this.features = new Set(result.features ?? []);
    return result;
  }

  async handshake() {
    this.setStatus('open');
    this.backoff = FIRST_BACKOFF_MS;
    try {
      if (this.onHandshake) await this.onHandshake(this);
      else await this.hello();
    } catch (err) {
      if (!(err instanceof Disconnected)) console.error('handshake failed', err);
      return;
    }
    this.isReady = true;
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
    this.dispatchEvent(new DetailEvent('ready', null));
    this.heartbeat();
  }

  /** Application ping: keeps the connection alive and measures the clock offset. */
  async ping() {
    const sent = Date.now();
    const ws = this.ws;
    const timeout = setTimeout(() => {
      if (this.ws === ws) ws.close(PING_TIMEOUT_CLOSE, 'ping timeout');
    }, PING_TIMEOUT_MS);
    try {
      const result = await this.request('ping', { time: sent });
      const back = Date.now();
      this.offset = result.time - Math.round((sent + back) / 2);
    } finally {
      clearTimeout(timeout);
    }
  }

  heartbeat() {
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      try {
        await this.ping();
      } catch {
        return; // closed: reconnection takes over
      }
      this.heartbeat();
    }, HEARTBEAT_MS);
  }

  closed(ws, code) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.isReady = false;
    clearTimeout(this.timer);
    clearTimeout(this.pumpTimer);
    this.pumpTimer = null;
    for (const waiter of [...this.pending.values(), ...this.outbox.splice(0)]) {
      waiter.reject(new Disconnected());
    }
    this.pending.clear();
    if (code === REPLACED) {
      // another tab or device took this seat with its token: do not fight over it
      this.setStatus('replaced');
      return;
    }
    if (this.target && !this.welcome) this.target = null; // unreachable: back home
    if (this.moving) {
      this.moving = false;
      this.timer = setTimeout(() => this.connect(), 0);
      return;
    }
    this.setStatus('closed');
    if (this.stopped || !this.reconnect) return;
    const delay = this.retryMs ?? this.backoff;
    this.retryMs = null;
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.timer = setTimeout(() => this.connect(), delay);
  }
}

/**
 * Take a seat's part in an open turn window, by docs/protocol.md's recipe: ask `legal`,
 * let `choose(actions, view)` pick one of the actions, `act`; again while the reply says
 * the seat still `owes` an act in the window (a Yamb turn is several). Returns the number
 * of actions sent; a late answer (the window closed, the game ended) ends it quietly.
 */
export async function answer(conn, room, window, choose) {
  let sent = 0;
  for (;;) {
    const legal = await conn.request('legal', { room });
    if (legal.window !== window || legal.actions.length === 0) return sent;
    const action = await choose(legal.actions, legal.view);
    let acted;
    try {
      acted = await conn.request('act', { room, window, action });
    } catch (err) {
      if (err instanceof ServerError && LATE.has(err.name)) return sent;
      throw err;
    }
    sent += 1;
    if (acted.owes.length === 0) return sent;
  }
}

const LATE = new Set(['window-closed', 'not-your-turn', 'game-over']);

/**
 * A one-off spectator's snapshot of a room on a connection of its own (the seat held on
 * another connection stays as it is): `hello`, `spectate`, the snapshot, close.
 */
export async function peek(room, options = {}) {
  const WS = options.WebSocket ?? (await webSocketClass());
  const url = options.url ?? pageUrl();
  const timeoutMs = options.timeoutMs ?? 10000;
  return new Promise((resolve, reject) => {
    const ws = new WS(url, [SUBPROTOCOL]);
    let id = 1;
    const send = (type, fields = {}) => ws.send(JSON.stringify({ ...fields, type, id: id++ }));
    const timer = setTimeout(() => finish(new Error('no snapshot in time')), timeoutMs);
    const finish = (error, snapshot) => {
      clearTimeout(timer);
      ws.onclose = null;
      if (ws.readyState <= WS.OPEN) ws.close(1000, 'done');
      if (error) reject(error);
      else resolve(snapshot);
    };
    ws.onmessage = (e) => {
      const msg = parse(e.data);
      if (msg.type === 'welcome') {
        send('hello', { client: options.client ?? CLIENT });
        send('spectate', { room });
      } else if (msg.type === 'reply' && !msg.ok) {
        finish(new ServerError(msg.error));
      } else if (msg.type === 'snapshot') {
        finish(null, msg);
      }
    };
    ws.onclose = () => finish(new Disconnected());
  });
}
