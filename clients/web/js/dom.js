// Tiny DOM helpers: build elements declaratively, keep keyboard focus across re-renders.

/**
 * h('button.box', {onclick, disabled: true, dataset: {key: 'x'}}, 'text', child, [more])
 * Attributes whose value is null, undefined or false are left out.
 */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (key === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (key === 'class') {
        el.className = [el.className, value].filter(Boolean).join(' ');
      } else if (key === 'style' && typeof value === 'object') {
        Object.assign(el.style, value);
      } else if (key in el && typeof value !== 'string') {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/**
 * Replace the content of `root`, keeping focus on the element with the same
 * data-key (every interactive element that survives a re-render carries one), so a
 * keyboard player does not lose their place when a room message redraws the page.
 */
export function replace(root, ...children) {
  const active = document.activeElement;
  const key = active && root.contains(active) ? active.dataset.key : undefined;
  const scrolls = [...root.querySelectorAll('[data-scroll]')].map((el) => [
    el.dataset.scroll,
    el.scrollLeft,
    el.scrollTop,
  ]);
  root.replaceChildren();
  append(root, children);
  for (const [name, left, top] of scrolls) {
    const el = root.querySelector(`[data-scroll="${name}"]`);
    if (el && el.dataset.keepScroll !== 'no') {
      el.scrollLeft = left;
      el.scrollTop = top;
    }
  }
  if (key !== undefined) {
    const again = root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus({ preventScroll: true });
  }
}

/** A short-lived message at the bottom of the screen (also read out by screen readers). */
export function toast(text, kind = 'info') {
  const box = document.getElementById('toasts');
  if (!box) return;
  const el = h(`div.toast.${kind}`, { role: kind === 'error' ? 'alert' : 'status' }, text);
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 6000 : 3500);
}
