// @ts-check
// An example bot on Node: it creates a room of a game, fills the other seats with house
// bots, and plays its seat to the end by docs/protocol.md's recipe (`answer`), choosing
// at random among the legal actions, in the window `conn.turn(room)` says is open. It
// survives a dropped connection: the handshake takes the seat back with its token and
// resumes the room's stream (saying its epoch), and the window open then is taken again,
// whether or not the resume brought a message; so is one a failover took the room back to
// (an unasked snapshot). At the end it checks the dice (the revealed seed hashes to
// the commitment published at the start) and prints one JSON line, with the player it
// played as (a new one, or DICEHALL_KEY's). It imports the package by its name, as a bot
// of your own would (clients/js/README.md).
//
//   [DICEHALL_KEY=pk1...] node examples/bot.mjs ws://127.0.0.1:8000/ws qwixx [seats] [kind]

import { createHash } from 'node:crypto';
import { Connection, answer } from 'dicehall-client';

const [url = 'ws://127.0.0.1:8000/ws', game = 'qwixx', seats = '2', kind = 'strong'] =
  process.argv.slice(2);

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
let taken = -1; // the window last taken: the messages after it show the same one

const conn = new Connection({ url, key: process.env.DICEHALL_KEY || null });

conn.onHandshake = async () => {
  const hello = await conn.hello({
    client: 'dicehall-js-example/1.0',
    name: 'node bot',
    ...(me.token ? { tokens: [me.token] } : {}),
  });
  if (me.room && hello.seats?.length) {
    await conn.resume(me.room, me.seq); // (with the room's epoch, when the server takes it)
  }
};

/** Take the seat's part in the window open now, if it is one of its actors. */
function play() {
  const room = me.room;
  const turn = room && conn.turn(room);
  if (!room || !turn || turn.window === taken) return;
  if (!turn.actors.some((a) => a.seat === me.seat)) return;
  taken = turn.window;
  turns = turns
    .then(() => answer(conn, room, turn.window, random))
    .then((sent) => {
      actions += sent;
    })
    .catch((err) => {
      if (err.name !== 'disconnected') throw err;
      taken = -1; // taken again once the reconnect has resumed the room ('ready')
    });
}

const over = new Promise((resolve) => {
  conn.addEventListener('message', (e) => {
    const msg = e.detail;
    if (!('room' in msg) || msg.room !== me.room) return;
    if (msg.type === 'snapshot') {
      me.seq = msg.seq; // a lower one too: a failover took the room back, its windows reopen
      taken = -1;
    } else if ('seq' in msg && typeof msg.seq === 'number') me.seq = Math.max(me.seq, msg.seq);
    if (msg.type === 'room' && msg.info.commitment) commitment = msg.info.commitment;
    if (msg.type === 'game_over') resolve(msg);
    else play();
  });
});
conn.addEventListener('ready', play);

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

const end = /** @type {import('dicehall-client').GameOver} */ (await over);
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
