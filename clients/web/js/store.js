// What survives a reload: the player's name and key, seat tokens, and per room the last
// seq processed with everything derived from the messages up to it (room info, game over,
// the log), so a resume from that seq continues exactly where the page left off.
// localStorage, so a browser restart or a second tab can take the seat back too, and this
// browser is one player to the server (one key per origin: localStorage is per origin).

const PREFIX = 'dicehall.v1.';
const MAX_SEATS = 16; // hello accepts at most 16 tokens
const MAX_LOG = 300;

function read(key, fallback) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the game still works, a reload just cannot resume
  }
}

function remove(key) {
  try {
    localStorage.removeItem(PREFIX + key);
  } catch {
    // nothing to clean
  }
}

/**
 * The display name; a first visit gets "Player NNNN" so that two people who never type a
 * name still get distinct seat names (game records need them distinct).
 */
export function getName() {
  let name = read('name', null);
  if (name === null) {
    name = `Player ${1000 + Math.floor(Math.random() * 9000)}`;
    write('name', name);
  }
  return name;
}

export function setName(name) {
  write('name', name);
}

/** The player key the server gave this browser (docs/protocol.md, "identity"), or null. */
export function getKey() {
  return read('player-key', null);
}

export function setKey(key) {
  write('player-key', key);
}

export function forgetKey() {
  remove('player-key');
}

/** room -> {seat, token, at} for every seat this browser holds. */
export function seats() {
  return read('seats', {});
}

export function seatOf(room) {
  return seats()[room] || null;
}

export function saveSeat(room, seat, token) {
  const all = seats();
  all[room] = { seat, token, at: Date.now() };
  const rooms = Object.keys(all).sort((a, b) => all[b].at - all[a].at);
  for (const old of rooms.slice(MAX_SEATS)) {
    delete all[old];
    remove('room.' + old);
  }
  write('seats', all);
  remove('room.' + room); // a new seat starts from seq 0
}

export function forget(room) {
  const all = seats();
  delete all[room];
  write('seats', all);
  remove('room.' + room);
}

/** The tokens to send in hello, most recent first, with the room of each. */
export function tokens() {
  const all = seats();
  const rooms = Object.keys(all)
    .sort((a, b) => all[b].at - all[a].at)
    .slice(0, MAX_SEATS);
  return { rooms, tokens: rooms.map((r) => all[r].token) };
}

/**
 * {lastSeq, epoch, info, over, turn, log, memo} as of the last message processed in a
 * seat's room (`epoch`: the room's, docs/protocol.md "Epochs").
 */
export function loadRoom(room) {
  return read('room.' + room, null);
}

export function saveRoom(room, data) {
  write('room.' + room, { ...data, log: data.log.slice(-MAX_LOG) });
}
