// The replay of a stored game (#/games/ID/replay?step=N): the game after each of its log
// entries, one step at a time, from the replay API's `views` (GET /api/games/ID/replay?step=N).
// This module steps: it loads the stored game and its steps, keeps the address, the bar
// (buttons, slider, arrow keys) and the seed check, and hands the step on screen to
// replaydraw.js, which draws it. Steps are fetched when wanted (the next one while the
// current one is read); the step on screen stays until the wanted one is in, so stepping
// never blanks the sheets.

import { h, replace, toast } from './dom.js';
import { ApiError, getJSON, hashQuery, problemNotice } from './api.js';
import { drawBody, drawHead, drawNow } from './replaydraw.js';

const KEEP = 400; // steps kept in memory (a few kB each)

export class ReplayView {
  constructor(app, gameId, query) {
    this.app = app;
    this.gameId = gameId;
    const step = Number(hashQuery(query).step);
    this.want = Number.isInteger(step) && step >= 0 ? step : 0;
    this.total = null; // the number of log entries (the last step)
    this.shown = null; // the replay answer on screen
    this.cache = new Map(); // step -> replay answer
    this.pending = new Map(); // step -> its request under way
    this.pumping = false;
    this.game = null; // GET /api/games/ID
    this.ladders = [];
    this.seedCheck = null; // true/false once the seed was hashed; null: not (yet) checked
    this.problem = null;
    this.destroyed = false;
    this.local = {}; // the game view's own state (the Qwirkle board's panning)
    this.path = `/api/games/${encodeURIComponent(gameId)}`;
    this.onKey = (e) => this.key(e);
    this.root = h('section.replay', { id: 'replay', dataset: { gameId } });
    this.head = h('header.room-head.replay-head');
    this.bar = this.makeBar();
    this.now = h('div.replay-now', { id: 'replay-now', 'aria-live': 'polite' });
    this.body = h('div.room-body.replay-body');
  }

  mount(root) {
    replace(root, this.root);
    document.addEventListener('keydown', this.onKey);
    this.render();
    this.start();
  }

  destroy() {
    this.destroyed = true;
    document.removeEventListener('keydown', this.onKey);
  }

  /** After a hello: the player is known, so their seat is marked. */
  sync() {
    if (this.game) this.render();
  }

  async start() {
    this.problem = null;
    this.render();
    try {
      const [game, first] = await Promise.all([
        getJSON(this.path),
        this.fetchStep(this.want),
        this.app.ladders().then((l) => (this.ladders = l)),
      ]);
      this.game = game;
      this.total = first.steps;
      this.checkSeed().catch(() => {}); // (a page that cannot hash shows no check)
      this.want = Math.min(this.want, this.total);
      this.keepUrl();
      this.show(this.want === first.step ? first : await this.fetchStep(this.want));
    } catch (err) {
      this.problem = await this.why(err);
      if (!this.destroyed) this.render();
    }
  }

  /** A failed start in words: a 404 is no such game, unless no history is kept at all. */
  async why(err) {
    if (!(err instanceof ApiError)) return new ApiError(0, String(err));
    if (err.status !== 404) return err;
    try {
      if (await this.app.historyKept()) return 'This server has no stored game with that id.';
    } catch (again) {
      return again instanceof ApiError ? again : err;
    }
    return err;
  }

  // --- steps ------------------------------------------------------------------------------

  fetchStep(n) {
    const known = this.cache.get(n);
    if (known) return Promise.resolve(known);
    if (!this.pending.has(n)) {
      const request = getJSON(`${this.path}/replay?step=${n}`)
        .then((answer) => {
          this.cache.set(answer.step, answer); // (a step past the end answers the end)
          if (this.cache.size > KEEP) this.cache.delete(this.cache.keys().next().value);
          return answer;
        })
        .finally(() => this.pending.delete(n));
      this.pending.set(n, request);
    }
    return this.pending.get(n);
  }

  /** Go to step `n` (kept within the game): drawn at once when fetched already. */
  goTo(n) {
    if (this.total === null) return;
    this.want = Math.max(0, Math.min(this.total, Math.round(n)));
    this.keepUrl();
    const known = this.cache.get(this.want);
    if (known) this.show(known);
    else {
      this.updateBar();
      this.pump();
    }
  }

  /** The address says the step (a reload or a shared link opens it there). */
  keepUrl() {
    const url = `#/games/${encodeURIComponent(this.gameId)}/replay?step=${this.want}`;
    if (location.hash !== url) history.replaceState(null, '', url);
  }

  /**
   * Fetch the wanted step, one request at a time: a slider dragged across a hundred steps
   * asks for the step it is at whenever the last answer is in, not for every step it
   * crossed; an answer for a step no longer wanted is kept, not drawn.
   */
  async pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.destroyed && (!this.shown || this.shown.step !== this.want)) {
        const n = this.want;
        const answer = await this.fetchStep(n);
        if (this.want === n && !this.destroyed) this.show(answer);
      }
    } catch (err) {
      if (!this.destroyed) {
        toast(`That step could not be loaded: ${err.message}`, 'error');
        if (this.shown) this.want = this.shown.step;
        this.updateBar();
      }
    } finally {
      this.pumping = false;
    }
  }

  show(answer) {
    this.shown = answer;
    this.want = answer.step;
    this.render();
    const next = answer.step + 1; // read next, most likely: fetched while this one is read
    if (next <= answer.steps && !this.cache.has(next)) this.fetchStep(next).catch(() => {});
  }

  key(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const target = e.target;
    if (target instanceof Element && target.closest('input, select, textarea, .board-viewport'))
      return; // (the slider and the board take the arrow keys themselves)
    const by = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
    if (!by || !this.shown) return;
    e.preventDefault();
    this.goTo(this.want + by);
  }

  // --- the bar and the page ---------------------------------------------------------------

  makeBar() {
    // the words go on a phone, the marks stay (the label says it to screen readers)
    const button = (key, label, mark, text, to, after = false) =>
      h(
        'button.btn.small',
        {
          type: 'button',
          id: `replay-${key}`,
          'aria-label': label,
          dataset: { key: `replay-${key}` },
          onclick: () => this.goTo(to()),
        },
        after ? h('span.btn-text', null, text) : null,
        h('span.btn-mark', { 'aria-hidden': 'true' }, mark),
        after ? null : h('span.btn-text', null, text),
      );
    this.buttons = {
      start: button('start', 'Start', '\u00ab', 'Start', () => 0),
      prev: button('prev', 'Previous step', '\u2039', 'Previous', () => this.want - 1),
      next: button('next', 'Next step', '\u203a', 'Next', () => this.want + 1, true),
      end: button('end', 'End', '\u00bb', 'End', () => this.total, true),
    };
    this.slider = h('input.replay-slider', {
      type: 'range',
      id: 'replay-step',
      min: '0',
      max: '0',
      value: '0',
      'aria-label': 'Step',
      dataset: { key: 'replay-step' },
      oninput: (e) => this.goTo(Number(e.target.value)),
    });
    this.counter = h('output.replay-counter', { id: 'replay-counter', for: 'replay-step' });
    return h(
      'div.replay-bar',
      { role: 'group', 'aria-label': 'step through the game' },
      h('div.replay-buttons.back', null, this.buttons.start, this.buttons.prev),
      this.slider,
      h('div.replay-buttons.on', null, this.buttons.next, this.buttons.end),
      this.counter,
    );
  }

  /** The bar is never redrawn, only updated: a slider being dragged stays the same element. */
  updateBar() {
    const total = this.total ?? 0;
    const at = this.want;
    const ready = this.total !== null;
    this.slider.max = String(total);
    if (Number(this.slider.value) !== at) this.slider.value = String(at);
    this.slider.disabled = !ready;
    this.slider.setAttribute('aria-valuetext', `step ${at} of ${total}`);
    this.buttons.start.disabled = !ready || at <= 0;
    this.buttons.prev.disabled = !ready || at <= 0;
    this.buttons.next.disabled = !ready || at >= total;
    this.buttons.end.disabled = !ready || at >= total;
    this.counter.textContent = ready ? `Step ${at} of ${total}` : '';
    const waiting = ready && (!this.shown || this.shown.step !== at);
    this.root.dataset.want = String(at);
    this.root.dataset.loading = waiting ? '1' : '0';
    this.body.setAttribute('aria-busy', String(waiting));
  }

  render() {
    const root = this.root;
    if (this.problem) {
      replace(
        root,
        h('h1', null, 'Replay'),
        problemNotice(this.problem, () => this.start()),
      );
      return;
    }
    if (!this.game || !this.shown) {
      replace(root, h('p.loading', null, 'Loading the game…'));
      return;
    }
    const step = this.shown;
    Object.assign(root.dataset, {
      game: this.game.game,
      step: String(step.step),
      steps: String(step.steps),
      over: step.over ? '1' : '0',
    });
    if (!root.contains(this.bar)) replace(root, this.head, this.bar, this.now, this.body);
    this.updateBar();
    const at = {
      game: this.game,
      gameId: this.gameId,
      path: this.path,
      ladders: this.ladders,
      step,
      total: this.total,
      seedCheck: this.seedCheck,
      me: this.app.playerId(),
      local: this.local,
      rerender: () => this.render(),
    };
    replace(this.head, ...drawHead(at));
    replace(this.now, ...drawNow(at));
    replace(this.body, ...drawBody(at));
  }

  /** SHA-256 of the seed against the commitment, where the browser can hash (secure pages). */
  async checkSeed() {
    const { seed, commitment } = this.game.record;
    const subtle = globalThis.crypto && globalThis.crypto.subtle;
    if (!seed || !commitment || !subtle || !/^([0-9a-f]{2})+$/.test(seed)) return;
    const bytes = new Uint8Array(seed.match(/../g).map((b) => parseInt(b, 16)));
    const digest = new Uint8Array(await subtle.digest('SHA-256', bytes));
    const hex = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
    this.seedCheck = hex === commitment;
    if (!this.destroyed && this.shown) this.render();
  }
}
