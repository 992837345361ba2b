// Qwirkle: a pannable board, the hand, and placements built tile by tile. Only cells where
// some legal placement can put the selected tile are clickable, so every "Place" is legal.

import { h } from '../dom.js';
import { LETTER, actButton, seatName } from './common.js';

/** The game's title, as the server's `games` names it (rules/qwirkle/__init__.py). */
export const TITLE = 'Qwirkle';

const GLYPH = { circle: '●', square: '■', diamond: '◆', star: '✶', clover: '♣', cross: '✚' };
const PAD = 2;
const MIN_X = 8; // the empty board still fills a screen's width
const MIN_Y = 5;

let resizing = false; // the window's resize listener is installed

const tileKey = (t) => `${t.color}/${t.shape}`;
const placedKey = (t) => `${t.color}/${t.shape}@${t.x},${t.y}`;

export function tile(t, attrs = {}) {
  const label = `${t.color} ${t.shape}`;
  return h(
    'span.tile',
    { class: `t-${t.color}`, title: label, 'aria-label': label, role: 'img', ...attrs },
    h('span.glyph', { 'aria-hidden': 'true' }, GLYPH[t.shape] || '?'),
    h('span.tile-letter', { 'aria-hidden': 'true' }, LETTER[t.color] || ''),
  );
}

/** Legal placements as key sets, computed once per legal refresh. */
function placements(ctx, local) {
  if (local.cacheFor !== ctx.actions) {
    local.cacheFor = ctx.actions;
    local.places = ctx.actions
      .filter((a) => a.type === 'place')
      .map((a) => ({ action: a, keys: new Set(a.tiles.map(placedKey)) }));
    local.swaps = ctx.actions.filter((a) => a.type === 'swap');
  }
  return local.places;
}

function reset(local) {
  local.selected = null;
  local.staged = [];
  local.swapping = false;
  local.swapSel = new Set();
}

export function render(ctx) {
  const view = ctx.view;
  const local = ctx.local;
  if (local.window !== view.window || local.handKey !== JSON.stringify(view.hand)) {
    local.window = view.window;
    local.handKey = JSON.stringify(view.hand);
    reset(local);
  }
  const places = placements(ctx, local);
  const staged = local.staged;
  const candidates = places.filter((p) => staged.every((s) => p.keys.has(placedKey(s))));
  const hand = view.hand || [];
  const selected = local.selected !== null ? hand[local.selected] : null;
  const targets = new Map();
  if (selected) {
    for (const p of candidates) {
      for (const t of p.action.tiles) {
        if (tileKey(t) !== tileKey(selected)) continue;
        const cell = `${t.x},${t.y}`;
        if (!staged.some((s) => `${s.x},${s.y}` === cell)) targets.set(cell, t);
      }
    }
  }
  const exact =
    candidates.find((p) => p.action.tiles.length === staged.length && staged.length) || null;

  const stage = (t) => {
    staged.push({ ...selected, x: t.x, y: t.y, hand: local.selected });
    local.selected = null;
    ctx.rerender();
  };

  const board = boardView(ctx, local, view.board, staged, targets, stage);
  const canPlace = places.length > 0;
  const canSwap = local.swaps.length > 0;
  const pass = ctx.actions.find((a) => a.type === 'pass');

  const handButtons = hand.map((t, i) => {
    const used = staged.some((s) => s.hand === i);
    const chosen = local.swapping ? local.swapSel.has(i) : local.selected === i;
    const usable = local.swapping ? canSwap : canPlace && !used && canStart(candidates, staged, t);
    return h(
      'button.hand-tile',
      {
        type: 'button',
        disabled: !usable,
        'aria-pressed': String(chosen),
        'aria-label': `${t.color} ${t.shape}${used ? ' (on the board)' : ''}`,
        dataset: { key: `hand-${i}`, hand: String(i), tile: tileKey(t) },
        onclick: () => {
          if (local.swapping) {
            if (local.swapSel.has(i)) local.swapSel.delete(i);
            else local.swapSel.add(i);
          } else {
            local.selected = local.selected === i ? null : i;
          }
          ctx.rerender();
        },
      },
      tile(t),
    );
  });

  const swapAction = local.swapping
    ? matchSwap(
        local.swaps,
        [...local.swapSel].map((i) => hand[i]),
      )
    : null;
  const buttons = [];
  if (ctx.actions.length) {
    if (!local.swapping) {
      buttons.push(
        actButton(
          ctx,
          staged.length ? `Place ${staged.length} tile${staged.length > 1 ? 's' : ''}` : 'Place',
          exact && exact.action,
          {
            class: 'primary',
            dataset: { key: 'place', action: 'place' },
          },
        ),
        h(
          'button.btn',
          {
            type: 'button',
            disabled: !staged.length,
            dataset: { key: 'undo' },
            onclick: () => {
              reset(local);
              ctx.rerender();
            },
          },
          'Take back',
        ),
      );
    }
    if (canSwap) {
      buttons.push(
        h(
          'button.btn',
          {
            type: 'button',
            'aria-pressed': String(local.swapping),
            dataset: { key: 'swap-mode', action: 'swap-mode' },
            onclick: () => {
              const was = local.swapping;
              reset(local);
              local.swapping = !was;
              ctx.rerender();
            },
          },
          local.swapping ? 'Cancel swap' : 'Swap tiles…',
        ),
      );
      if (local.swapping) {
        buttons.push(
          actButton(
            ctx,
            `Swap ${local.swapSel.size || ''} tile${local.swapSel.size === 1 ? '' : 's'}`,
            swapAction,
            { class: 'primary', dataset: { key: 'swap', action: 'swap' } },
          ),
        );
      }
    }
    if (pass)
      buttons.push(actButton(ctx, 'Pass', pass, { dataset: { key: 'pass', action: 'pass' } }));
  }

  let prompt;
  if (!ctx.actions.length)
    prompt = view.over ? 'The game is over.' : `Waiting for ${seatName(ctx, view.turn)}.`;
  else if (local.swapping) prompt = 'Choose the tiles to give back, then swap.';
  else if (view.opening_size)
    prompt = `First move: place ${view.opening_size} tiles in one line through the centre (★).`;
  else if (selected)
    prompt = `Choose a highlighted cell for the ${selected.color} ${selected.shape}.`;
  else prompt = 'Choose a tile from your hand, then a highlighted cell on the board.';

  // the prompt, the buttons and the hand stay together under the board (and stick to the
  // bottom of the screen while the board is in view), so all three are on screen at once
  const seated = ctx.seat !== null && ctx.seat !== undefined;
  const main = [
    board,
    h(
      'div.controls.qwirkle-dock',
      { class: seated ? 'seated' : '' },
      h('p.prompt', { class: ctx.actions.length ? '' : 'waiting' }, prompt),
      seated
        ? h(
            'div.dock-row',
            null,
            h(
              'section.hand',
              { 'aria-label': 'your hand' },
              h('span.hand-label', null, 'Your hand'),
              h('div.hand-tiles', { role: 'group' }, handButtons),
            ),
            buttons.length ? h('div.button-row', null, buttons) : null,
          )
        : null,
    ),
  ];
  const others = [
    h(
      'section.seat-panel.qwirkle-scores',
      { 'aria-label': 'players' },
      h(
        'header.seat-head',
        null,
        h('span.seat-name', null, 'Players'),
        h('span.bag', { title: 'tiles left in the bag' }, `bag: ${view.bag}`),
      ),
      h(
        'ul.plain',
        null,
        (view.scores || []).map((score, s) =>
          h(
            'li',
            { class: (view.actors || []).includes(s) ? 'acting' : '' },
            h(
              'span.seat-name',
              null,
              s === ctx.seat ? `${ctx.names[s] || 'You'} (you)` : seatName(ctx, s),
            ),
            ` · ${view.hand_sizes[s]} tiles · `,
            h('b', { dataset: { scoreSeat: String(s) } }, `${score} pts`),
          ),
        ),
      ),
    ),
  ];
  return { main, others };
}

function canStart(candidates, staged, t) {
  return candidates.some(
    (p) =>
      p.action.tiles.length > staged.length &&
      p.action.tiles.some(
        (x) => tileKey(x) === tileKey(t) && !staged.some((s) => s.x === x.x && s.y === x.y),
      ),
  );
}

function matchSwap(swaps, tiles) {
  if (!tiles.length) return null;
  const want = tiles.map(tileKey).sort().join();
  return swaps.find((a) => a.tiles.map(tileKey).sort().join() === want) || null;
}

function boardView(ctx, local, tiles, staged, targets, stage) {
  const cells = new Map();
  for (const t of tiles) cells.set(`${t.x},${t.y}`, { t, kind: 'laid' });
  for (const t of staged) cells.set(`${t.x},${t.y}`, { t, kind: 'staged' });
  // the grid is drawn around the middle of the laid tiles (the centre star before the first
  // move), at least MIN_X x MIN_Y cells each way and PAD beyond anything on it
  const mid = (values) => (values.length ? (Math.min(...values) + Math.max(...values)) / 2 : 0);
  const cx = Math.round(mid(tiles.map((t) => t.x)));
  const cy = Math.round(mid(tiles.map((t) => t.y)));
  let rx = MIN_X;
  let ry = MIN_Y;
  for (const key of [...cells.keys(), ...targets.keys(), '0,0']) {
    const [x, y] = key.split(',').map(Number);
    rx = Math.max(rx, Math.abs(x - cx) + PAD);
    ry = Math.max(ry, Math.abs(y - cy) + PAD);
  }
  const x0 = cx - rx;
  const x1 = cx + rx;
  const y0 = cy - ry;
  const y1 = cy + ry;
  const grid = [];
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const key = `${x},${y}`;
      const here = cells.get(key);
      const target = targets.get(key);
      const origin = x === 0 && y === 0;
      if (here) {
        grid.push(
          h(
            'div.cell.filled',
            { class: here.kind, dataset: { x: String(x), y: String(y) } },
            tile(here.t),
          ),
        );
      } else if (target) {
        grid.push(
          h(
            'button.cell.target',
            {
              type: 'button',
              dataset: { key: `cell-${key}`, x: String(x), y: String(y) },
              'aria-label': `Put it at column ${x}, row ${y}`,
              onclick: () => stage(target),
            },
            origin ? '★' : '+',
          ),
        );
      } else {
        grid.push(
          h(
            'div.cell',
            { class: origin ? 'origin' : '', dataset: { x: String(x), y: String(y) } },
            origin ? '★' : '',
          ),
        );
      }
    }
  }
  const width = x1 - x0 + 1;
  const grid_el = h(
    'div.board-grid',
    { style: { gridTemplateColumns: `repeat(${width}, var(--cell))` } },
    grid,
  );
  const viewport = h(
    'div.board-viewport',
    {
      dataset: { scroll: 'board' },
      tabindex: '0',
      'aria-label': 'the board: drag, scroll or use the arrow keys to pan',
    },
    grid_el,
  );
  const panned = () => {
    local.panned = true;
  };
  enablePan(viewport, panned);
  // centred on the tiles when first drawn and whenever tiles are laid, unless the player
  // has panned since; otherwise the same cells stay in view when the grid grows. Only the
  // board on the page does it: a board redrawn before the next frame is no longer there
  // (the redraw carried its scroll offsets over, see dom.replace)
  const laid = tiles.length;
  if (local.centreNext !== false || (laid !== local.laid && !local.panned)) {
    local.centreNext = false;
    local.centring = true;
  }
  local.laid = laid;
  requestAnimationFrame(() => {
    if (!viewport.isConnected) return;
    const drawn = local.scrolledFor;
    if (local.centring) {
      local.centring = false;
      centreOnTiles(viewport);
    } else if (drawn && (drawn.x0 !== x0 || drawn.y0 !== y0)) {
      const pitch = cellPitch(viewport);
      viewport.scrollLeft += (drawn.x0 - x0) * pitch;
      viewport.scrollTop += (drawn.y0 - y0) * pitch;
    }
    local.scrolledFor = { x0, y0 }; // the grid the scroll offsets are now right for
  });
  viewport.follow = () => {
    if (!local.panned) centreOnTiles(viewport); // (a new window size: centred again)
  };
  if (!resizing) {
    resizing = true;
    window.addEventListener('resize', () => {
      const board = document.querySelector('.board-viewport');
      if (board && board.follow) requestAnimationFrame(() => board.follow());
    });
  }
  const pan = (dx, dy) => () => {
    panned();
    viewport.scrollBy({ left: dx * cellPitch(viewport) * 3, top: dy * cellPitch(viewport) * 3 });
  };
  return h(
    'section.board',
    { 'aria-label': 'board' },
    viewport,
    h(
      'div.pan',
      { role: 'group', 'aria-label': 'pan the board' },
      h(
        'button.btn.small',
        {
          type: 'button',
          onclick: pan(-1, 0),
          'aria-label': 'pan left',
          dataset: { key: 'pan-l' },
        },
        '←',
      ),
      h(
        'button.btn.small',
        { type: 'button', onclick: pan(0, -1), 'aria-label': 'pan up', dataset: { key: 'pan-u' } },
        '↑',
      ),
      h(
        'button.btn.small',
        { type: 'button', onclick: pan(0, 1), 'aria-label': 'pan down', dataset: { key: 'pan-d' } },
        '↓',
      ),
      h(
        'button.btn.small',
        {
          type: 'button',
          onclick: pan(1, 0),
          'aria-label': 'pan right',
          dataset: { key: 'pan-r' },
        },
        '→',
      ),
      h(
        'button.btn.small',
        {
          type: 'button',
          'aria-label': 'centre the board on the tiles',
          onclick: () => {
            local.panned = false;
            centreOnTiles(viewport);
          },
          dataset: { key: 'pan-c' },
        },
        'Centre',
      ),
    ),
  );
}

/** The distance from one cell to the next (a cell and the grid's gap). */
function cellPitch(viewport) {
  const cells = viewport.querySelectorAll('.board-grid > *');
  if (cells.length > 1) {
    const a = cells[0].getBoundingClientRect();
    const b = cells[1].getBoundingClientRect();
    if (b.left > a.left) return b.left - a.left;
  }
  return cells.length ? cells[0].getBoundingClientRect().width : 40;
}

/** Scroll the board so that the middle of the laid tiles (else the star) is in the middle. */
function centreOnTiles(viewport) {
  let found = [...viewport.querySelectorAll('.cell.laid')];
  if (!found.length) found = [...viewport.querySelectorAll('[data-x="0"][data-y="0"]')];
  if (!found.length) return;
  const boxes = found.map((el) => el.getBoundingClientRect());
  const left = Math.min(...boxes.map((r) => r.left));
  const right = Math.max(...boxes.map((r) => r.right));
  const top = Math.min(...boxes.map((r) => r.top));
  const bottom = Math.max(...boxes.map((r) => r.bottom));
  const frame = viewport.getBoundingClientRect();
  const midX = frame.left + viewport.clientLeft + viewport.clientWidth / 2;
  const midY = frame.top + viewport.clientTop + viewport.clientHeight / 2;
  viewport.scrollLeft += (left + right) / 2 - midX;
  viewport.scrollTop += (top + bottom) / 2 - midY;
}

function enablePan(viewport, panned) {
  let drag = null;
  viewport.addEventListener('pointerdown', (e) => {
    if (e.target.closest('button')) return;
    drag = { x: e.clientX, y: e.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
    viewport.setPointerCapture(e.pointerId);
    viewport.classList.add('dragging');
  });
  viewport.addEventListener('pointermove', (e) => {
    if (!drag) return;
    panned();
    viewport.scrollLeft = drag.left - (e.clientX - drag.x);
    viewport.scrollTop = drag.top - (e.clientY - drag.y);
  });
  const end = () => {
    drag = null;
    viewport.classList.remove('dragging');
  };
  viewport.addEventListener('pointerup', end);
  viewport.addEventListener('pointercancel', end);
  viewport.addEventListener('wheel', panned, { passive: true });
  viewport.addEventListener('keydown', (e) => {
    const step = cellPitch(viewport);
    const moves = {
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step],
    };
    const move = moves[e.key];
    if (!move) return;
    e.preventDefault();
    panned();
    viewport.scrollBy({ left: move[0], top: move[1] });
  });
}

/** A replay's end: every seat's hand, shown now that the game is over (null before). */
export function replayHands(step, names) {
  if (!step.views.some((v) => Array.isArray(v.hand))) return null;
  return h(
    'section.seat-panel.replay-hands',
    { 'aria-label': 'the hands' },
    h('header.seat-head', null, h('span.seat-name', null, 'Hands')),
    h(
      'ul.plain',
      null,
      step.views.map((v, s) =>
        h(
          'li.replay-hand',
          { dataset: { seat: String(s) } },
          h('span.seat-name', null, `${names[s]}: `),
          (v.hand || []).length
            ? h(
                'span.hand-tiles',
                null,
                v.hand.map((t) => tile(t)),
              )
            : h('span.small', null, 'no tiles'),
        ),
      ),
    ),
  );
}
