// @ts-check
// An example bot on Node: it creates a room of a game, fills the other seats with house
// bots, and plays its seat to the end by docs/protocol.md's recipe (`answer`), choosing
// at random among the legal actions. It survives a dropped connection: the handshake
// takes the seat back with its token and resumes the room's stream. At the end it checks
// the dice (the revealed seed hashes to the commitment published at the start) and prints
// one JSON line, with the player it played as (a new one, or DICEHALL_KEY's).
//
//   [DICEHALL_KEY=pk1...] node examples/bot.mjs ws://127.0.0.1:8000/ws qwixx [seats] [kind]

import { createHash } from 'node:crypto';
import { Connection, answer } from '../dicehall.js';

const [url = 'ws://127.0.0.1:8000/ws', game = 'qwixx', seats = '2', kind = 'strong'] =
  process.argv.slice(2);

/** Node 22 has a WebSocket of its own; older ones take the `ws` package's. */
const WebSocketClass = globalThis.WebSocket ?? (await import('ws')).WebSocket;

/**
 * @template T
 * @param {T[]} actions
 * @returns {T}
 */
const random = (actions) => actions[Math.floor(Math.random() * actions.length)];

/** @type {{ room: string | null, seat: number | null, token: string | null, seq: number }} */
const me = { room: null, seat: null, token: null, seq: 0 };
let commitment = '';
let actions = 0;
let turns = Promise.resolve();

const conn = new Connection({
  url,
  WebSocket: /** @type {any} */ (WebSocketClass),
  key: process.env.DICEHALL_KEY || null,
});

conn.onHandshake = async () => {
  const hello = await conn.hello({
    client: 'dicehall-js-example/1.0',
    name: 'node bot',
    ...(me.token ? { tokens: [me.token] } : {}),
  });
  if (me.room && hello.seats?.length) {
    await conn.request('resume', { room: me.room, last_seq: me.seq });
  }
};

/** @param {{ window: number, actors: { seat: number }[] } | null | undefined} turn */
function take(turn) {
  const room = me.room;
  if (!room || !turn || !turn.actors.some((a) => a.seat === me.seat)) return;
  turns = turns
    .then(() => answer(conn, room, turn.window, random))
    .then((sent) => {
      actions += sent;
    })
    .catch((err) => {
      if (err.name !== 'disconnected') throw err; // resumed after the reconnect
    });
}

const over = new Promise((resolve) => {
  conn.addEventListener('message', (e) => {
    const msg = e.detail;
    if (!('room' in msg) || msg.room !== me.room) return;
    if ('seq' in msg && typeof msg.seq === 'number') me.seq = Math.max(me.seq, msg.seq);
    if (msg.type === 'room' && msg.info.commitment) commitment = msg.info.commitment;
    if (msg.type === 'snapshot') take(msg.turn);
    if (msg.type === 'window') take(msg);
    if (msg.type === 'game_over') resolve(msg);
  });
});

conn.connect();
await conn.ready();
const created = await conn.request('create', {
  game,
  seats: Number(seats),
  turn_window: 20,
  public: false,
});
me.room = created.room.room;
const joined = await conn.request('join', { room: me.room, seat: 0 });
me.seat = joined.seat;
me.token = joined.token;
await conn.request('add_bots', { room: me.room, kind });
commitment = await conn.request('start', { room: me.room }).then((r) => r.commitment);

const end = /** @type {import('../dicehall.js').GameOver} */ (await over);
await turns;
conn.close();
const seed = Buffer.from(end.seed, 'hex');
const fair = createHash('sha256').update(seed).digest('hex') === end.commitment;
console.log(
  JSON.stringify({
    game,
    room: me.room,
    seat: me.seat,
    scores: end.scores,
    winners: end.winners,
    actions,
    fair: fair && end.commitment === commitment,
    player: conn.player?.id ?? null,
  }),
);
process.exit(fair ? 0 : 1);
