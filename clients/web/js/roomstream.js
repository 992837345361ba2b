// A room's numbered message stream, applied to its page (`page`, the RoomView): each
// message changes what the page knows (info, turn, game over) and adds the log's lines,
// in seq order; what arrives before the resume's answer waits, what is already known is
// only logged. Apart from room.js so that the stream's rules read in one place.

import { describeEvent, describeInfo, describeMessage, rememberView } from './describe.js';

/** One message from the room (main.js hands them over), in whatever order it came. */
export function receive(page, msg) {
  if (msg.type === 'progress') {
    progress(page, msg);
    return;
  }
  if (page.syncing && msg.type !== 'snapshot') {
    page.early.push(msg);
    return;
  }
  if (msg.type === 'snapshot') {
    snapshot(page, msg);
    return;
  }
  if (msg.seq <= page.lastSeq) {
    backfill(page, msg);
    return;
  }
  page.lastSeq = msg.seq;
  apply(page, msg, true);
  page.persistSoon();
  if (msg.type !== 'chat') page.scheduleRefresh();
  page.renderSoon();
}

/** Who has answered the open window: a hint as of its seq, dropped when not current. */
function progress(page, msg) {
  if (page.syncing || msg.seq !== page.lastSeq) return;
  if (!page.turn || page.turn.window !== msg.window) return;
  const actors = page.turn.actors.filter((a) => !msg.answered.includes(a.seat));
  page.turn = { ...page.turn, actors };
  page.scheduleRefresh(); // the view lists who answered (and hides what)
  page.renderSoon();
}

function snapshot(page, msg) {
  const before = page.lastSeq;
  const epochBefore = page.roomEpoch;
  if (msg.seq < before) rewind(page, msg.seq);
  page.roomEpoch = msg.epoch ?? 0;
  page.info = msg.info;
  rememberView(msg.info.game, msg.view, page.memo);
  page.view = Object.keys(msg.view).length ? msg.view : null;
  page.turn = msg.turn;
  page.lastSeq = msg.seq;
  if (msg.view && msg.view.over && !page.over) overFromView(page, msg.view);
  if (page.backfillFrom !== null && msg.seq > page.backfillFrom && page.backfillFrom > 0) {
    // the messages between leaving and watching again are in the snapshot's state, not in
    // the log yet: ask for them (they are only logged, see backfill)
    const from = page.backfillFrom;
    page.conn.resume(page.room, from, epochBefore).catch(() => {}); // (the epoch as of `from`)
  } else if (before === 0 && page.log.length === 0) {
    page.note(
      page.mode === 'seat' && page.seat !== null
        ? `You joined the room (seat ${page.seat + 1}).`
        : 'You are watching the room.',
    );
  }
  page.backfillFrom = null;
  if (page.mode === 'seat') page.scheduleRefresh(0);
  page.persistSoon();
  page.renderSoon();
}

/**
 * A snapshot below the last seq came unasked: a failover took the room back to `seq`
 * (docs/protocol.md, "Epochs"). What the log said after it never happened: its lines go,
 * and so do a game over and the messages held back from then; the snapshot redraws the rest.
 */
function rewind(page, seq) {
  page.log = page.log.filter((e) => e.seq <= seq);
  page.logged = new Set(page.log.map((e) => e.seq));
  page.early = page.early.filter((m) => m.seq <= seq);
  page.over = null;
  page.ended = false;
  page.lastSeq = seq;
  page.note(
    'The room went back to an earlier point (a server failed over): the lines after it did not happen.',
  );
}

/** Game over as a view says it (a snapshot, a fresh peek) when its message was not seen. */
export function overFromView(page, view) {
  page.over = {
    scores: view.scores,
    winners: view.winners || [],
    seed: null,
    commitment: page.info.commitment,
  };
}

/** A message at or below lastSeq: already reflected in the state; log it if it is missing. */
function backfill(page, msg) {
  if (page.logged.has(msg.seq) || msg.type === 'snapshot') return;
  apply(page, msg, false);
  page.log.sort((a, b) => a.seq - b.seq);
  page.persistSoon();
  page.renderSoon();
}

function apply(page, msg, live) {
  const nameOf = (s) => page.nameOf(s);
  const game = page.info ? page.info.game : '';
  const lines = [];
  switch (msg.type) {
    case 'room':
      if (live) {
        lines.push(...describeInfo(page.info, msg.info));
        page.info = msg.info;
      }
      break;
    case 'event': {
      const text = describeEvent(game, msg.event, nameOf, page.memo);
      if (text) lines.push(text);
      break;
    }
    case 'window':
      if (live) page.turn = { window: msg.window, deadline: msg.deadline, actors: msg.actors };
      break;
    case 'window_closed':
      if (live && page.turn && page.turn.window === msg.window) page.turn = null;
      break;
    case 'game_over':
      page.ended = true;
      if (live) {
        page.over = {
          scores: msg.scores,
          winners: msg.winners,
          seed: msg.seed,
          commitment: msg.commitment,
        };
        page.turn = null;
      }
      break;
    default:
      break;
  }
  const text = describeMessage(msg, nameOf, page.memo);
  if (text) lines.push(text);
  page.logged.add(msg.seq);
  for (const line of lines) page.log.push({ seq: msg.seq, text: line, kind: msg.type });
}
