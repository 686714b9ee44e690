// DOM helpers of the dashboard. Strings only ever become text nodes
// (textContent, createTextNode) or values of inert attributes: nothing here
// parses markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

export const $ = (id) => document.getElementById(id);

/** An element with a class and children; strings become text nodes. */
export function el(tag, cls, ...children) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function num(n) {
  return typeof n === 'number' && isFinite(n) ? n.toLocaleString('en-US') : '–';
}

/**
 * Failures over calls as the store reports a rate (toolwarden_store::failure_rate):
 * failures folded from dropped events at their own time can outnumber the
 * calls of a window, so as many failures as calls or more is 100 %, and none 0 %.
 */
export function failureRate(failures, calls) {
  failures = failures || 0;
  calls = calls || 0;
  if (failures >= calls) return failures === 0 ? 0 : 1;
  return failures / calls;
}

export function rateOf(row) {
  if (typeof row.failure_rate === 'number') return row.failure_rate;
  return failureRate(row.failures, row.calls);
}

export function pct(r) {
  if (typeof r !== 'number' || !isFinite(r)) return '–';
  const p = r * 100;
  return (p > 0 && p < 0.1 ? '<0.1' : p.toFixed(p >= 10 || p === 0 ? 0 : 1)) + '%';
}

export function pad2(n) {
  return String(n).padStart(2, '0');
}

export function clock(ms) {
  if (typeof ms !== 'number') return '–';
  const d = new Date(ms);
  const t = pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
  const today = new Date();
  if (d.toDateString() === today.toDateString()) return t;
  return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' + t;
}

export function ago(ms) {
  if (typeof ms !== 'number') return '';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return s + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  if (s < 86400) return Math.floor(s / 3600) + 'h ago';
  return Math.floor(s / 86400) + 'd ago';
}

export function timeCell(ms) {
  const t = el('time', null, clock(ms));
  if (typeof ms === 'number') {
    t.setAttribute('datetime', new Date(ms).toISOString());
    t.title = ago(ms);
  }
  return t;
}

export function rateBar(rate) {
  const wrap = el('div', 'rate');
  const bar = el('div', 'rate-bar');
  const fill = el('div', 'rate-fill' + (rate >= 0.2 ? ' hot' : rate > 0 ? ' warm' : ''));
  fill.style.width = Math.min(100, Math.max(0, rate * 100)).toFixed(1) + '%';
  bar.appendChild(fill);
  wrap.append(bar, el('span', 'rate-text', pct(rate)));
  return wrap;
}

export function linkButton(text, title, onClick) {
  const b = el('button', 'link', text);
  b.type = 'button';
  if (title) b.title = title;
  b.addEventListener('click', onClick);
  return b;
}

export function basisBadge(basis) {
  const b = String(basis || 'none');
  return el('span', 'badge basis-' + (['explicit', 'client', 'heuristic', 'none'].includes(b) ? b : 'other'), b);
}

export function shortId(id) {
  const s = String(id);
  return s.length > 14 ? s.slice(0, 12) + '…' : s;
}

export function emptyRow(cols, text) {
  const td = el('td', 'empty', text);
  td.colSpan = cols;
  return el('tr', null, td);
}

export function duration(s) {
  if (s < 60) return Math.round(s) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h';
  return (s / 86400).toFixed(1) + ' d';
}
