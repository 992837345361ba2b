// The WebSocket connection: protocol v1 over JSON text frames, one reply per request,
// reconnection with backoff, an application heartbeat and a clock offset for countdowns.

export const SUBPROTOCOL = 'dicehall.v1.json';
const CLIENT = 'dicehall-web/1.0';
const HEARTBEAT_MS = 15000;
const PING_TIMEOUT_MS = 10000;
const MAX_BACKOFF_MS = 5000;

/** An error reply: `code`, `name` (stable), `message` (for people), `rule` (illegal actions). */
export class ServerError extends Error {
  constructor(error) {
    super(error.message || error.name);
    this.code = error.code;
    this.name = error.name;
    this.rule = error.rule;
  }
}

export class Disconnected extends Error {
  constructor() {
    super('the connection dropped');
    this.name = 'disconnected';
  }
}

function wsUrl() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}

/**
 * Emits: 'status' (detail: connecting | open | closed | replaced), 'message' (a server
 * message that is not a reply), 'ready' (after the handshake: hello, then whatever the
 * app does in `onHandshake`).
 */
export class Connection extends EventTarget {
  constructor() {
    super();
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.status = 'closed';
    this.offset = 0; // server clock minus ours, ms
    this.backoff = 250;
    this.retryMs = null;
    this.timer = null;
    this.stopped = false;
    this.readyWaiters = [];
    this.isReady = false;
    /** async (conn) => void: say hello (the first request), then resume; set by the app. */
    this.onHandshake = null;
    /** Where the room's own server process takes connections (null: this page's server). */
    this.target = null;
    this.url = null;
    this.welcomed = false;
    this.moving = false;
  }

  connect() {
    this.stopped = false;
    if (this.ws) return;
    this.setStatus('connecting');
    this.url = this.target || wsUrl();
    const ws = new WebSocket(this.url, [SUBPROTOCOL]);
    this.ws = ws;
    this.nextId = 1;
    this.welcomed = false;
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = (e) => this.closed(ws, e.code);
    ws.onerror = () => {}; // onclose follows
  }

  /**
   * A reply said where the room is run (docs/protocol.md, "Following a room to its
   * server"): reconnect there, where no request has to cross between server processes.
   * The handshake takes the seats back with their tokens and resumes, as after any drop;
   * if that address cannot be reached, the next attempt goes back to this page's server.
   */
  follow(url) {
    if (!url || url === this.url || !this.ws) return;
    this.target = url;
    this.moving = true;
    this.ws.close(1000, 'following the room to its server');
  }

  /** Close on purpose (tests use it to simulate a dropped network; reconnects after). */
  drop() {
    if (this.ws) this.ws.close(1000, 'client drop');
  }

  setStatus(status) {
    this.status = status;
    this.dispatchEvent(new CustomEvent('status', { detail: status }));
  }

  get now() {
    return Date.now() + this.offset;
  }

  /** Send a request; resolves with its result, rejects with ServerError or Disconnected. */
  request(type, fields = {}) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new Disconnected());
    const id = this.nextId++;
    ws.send(JSON.stringify({ ...fields, type, id }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** Resolves once the handshake of the current connection is done. */
  ready() {
    if (this.isReady) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.type === 'reply') {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.ok) waiter.resolve(msg.result);
      else waiter.reject(new ServerError(msg.error));
      return;
    }
    if (msg.type === 'welcome') {
      this.welcomed = true;
      this.handshake();
      return;
    }
    if (msg.type === 'goodbye') {
      this.retryMs = msg.retry_ms ?? null;
      this.goodbye = msg;
    }
    this.dispatchEvent(new CustomEvent('message', { detail: msg }));
  }

  async handshake() {
    this.setStatus('open');
    this.backoff = 250;
    try {
      if (this.onHandshake) await this.onHandshake(this);
    } catch (err) {
      if (!(err instanceof Disconnected)) console.error('handshake failed', err);
      return;
    }
    this.isReady = true;
    for (const resolve of this.readyWaiters.splice(0)) resolve();
    this.dispatchEvent(new CustomEvent('ready'));
    this.heartbeat();
  }

  /** Application ping: keeps the connection alive and measures the clock offset. */
  async ping() {
    const sent = Date.now();
    const ws = this.ws;
    const timeout = setTimeout(() => {
      if (this.ws === ws) ws.close(4000 + 999, 'ping timeout');
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
    for (const waiter of this.pending.values()) waiter.reject(new Disconnected());
    this.pending.clear();
    if (code === 4006) {
      // another tab or device took this seat with its token: do not fight over it
      this.setStatus('replaced');
      return;
    }
    if (this.target && !this.welcomed) this.target = null; // unreachable: back home
    if (this.moving) {
      this.moving = false;
      this.timer = setTimeout(() => this.connect(), 0);
      return;
    }
    this.setStatus('closed');
    if (this.stopped) return;
    const delay = this.retryMs ?? this.backoff;
    this.retryMs = null;
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.timer = setTimeout(() => this.connect(), delay);
  }
}

export const clientName = CLIENT;

/**
 * A one-off spectator's snapshot of a room on a connection of its own, so the seat held on
 * the main connection stays as it is (used for the final view once a game is over: `legal`
 * answers only while the game is on).
 */
export function peek(room, timeoutMs = 10000) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(), [SUBPROTOCOL]);
    let id = 1;
    const send = (type, fields = {}) => ws.send(JSON.stringify({ ...fields, type, id: id++ }));
    const timer = setTimeout(() => finish(new Error('no snapshot in time')), timeoutMs);
    const finish = (error, snapshot) => {
      clearTimeout(timer);
      ws.onclose = null;
      if (ws.readyState <= WebSocket.OPEN) ws.close(1000, 'done');
      if (error) reject(error);
      else resolve(snapshot);
    };
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.type === 'welcome') {
        send('hello', { client: CLIENT });
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
