// The failures-over-time chart and the per-tool sparklines: inline SVG
// built with DOM calls from /api/stats' `timeline`.

import { clear, clock, el, pad2, svg } from './dom.js';

const PALETTE = ['#d9480f', '#1971c2', '#2f9e44', '#9c36b5', '#e8a400', '#0c8599', '#868e96'];

export const UNIT_MS = { s: 1000, m: 60000, h: 3600000, d: 86400000, w: 604800000 };

/** A time range filter (`15m`, `24h`, `all`…) in ms, or null for all time. */
export function sinceMs(since) {
  const m = /^(\d+)([smhdw])$/.exec(since || '');
  return m ? Number(m[1]) * UNIT_MS[m[2]] : null;
}

/**
 * The chart's time axis: sorted buckets, the bucket width (the smallest
 * gap, else read off the bucket's alignment) and the span shown — the
 * selected range, or for all time the buckets (at least 12 wide).
 */
export function buckets(timeline, since) {
  const bs = [...new Set(timeline.map((p) => p.bucket_ms).filter((b) => typeof b === 'number'))].sort((a, b) => a - b);
  let step = Infinity;
  for (let i = 1; i < bs.length; i++) step = Math.min(step, bs[i] - bs[i - 1]);
  if (!isFinite(step) || step <= 0) {
    const b = bs.length ? bs[0] : 0;
    step = b % UNIT_MS.d === 0 ? UNIT_MS.d : b % UNIT_MS.h === 0 ? UNIT_MS.h : UNIT_MS.m;
  }
  const now = Date.now();
  const range = sinceMs(since);
  let t0, t1;
  if (range !== null) {
    t1 = Math.ceil(now / step) * step;
    t0 = Math.min(Math.floor((now - range) / step) * step, bs.length ? bs[0] : t1 - step);
  } else {
    t1 = (bs.length ? Math.max(bs[bs.length - 1] + step, 0) : Math.ceil(now / step) * step);
    t0 = Math.min(bs.length ? bs[0] : t1, t1 - 12 * step);
  }
  if (t1 <= t0) t1 = t0 + step;
  return { bs, step, t0, t1 };
}

/**
 * A tick label: the date for day buckets, else the time of day. Day
 * buckets are UTC days (the store buckets by `at_ms / 86400000`), so they
 * are named by their UTC date; hours and minutes by the viewer's clock.
 */
export function tickLabel(ms, step) {
  const d = new Date(ms);
  if (step >= UNIT_MS.d) return d.getUTCFullYear() + '-' + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate());
  return pad2(d.getHours()) + ':' + pad2(d.getMinutes());
}

export function bucketLabel(ms, step) {
  if (step >= UNIT_MS.d) return tickLabel(ms, step) + ' (UTC day)';
  return clock(ms) + (step >= UNIT_MS.h ? ' (hour)' : '');
}

export function toolColors(tools, timeline) {
  const fails = new Map();
  for (const p of timeline) fails.set(p.tool, (fails.get(p.tool) || 0) + (p.failures || 0));
  for (const t of tools) if (!fails.has(t.tool)) fails.set(t.tool, t.failures || 0);
  const ranked = [...fails.entries()].filter(([, f]) => f > 0).sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
  const colors = new Map();
  ranked.slice(0, PALETTE.length - 1).forEach(([t], i) => colors.set(t, PALETTE[i]));
  return { colors, other: PALETTE[PALETTE.length - 1] };
}

/** Draws the stacked failures chart into `box` and its legend into `legend`. */
export function renderChart(box, legend, timeline, tools, since) {
  clear(box);
  clear(legend);
  const { step, t0, t1 } = buckets(timeline, since);
  const failing = timeline.filter((p) => (p.failures || 0) > 0);
  if (failing.length === 0) {
    box.appendChild(el('p', 'empty', 'No tool failures in this range.'));
    return;
  }
  const { colors, other } = toolColors(tools, timeline);
  const W = 960, H = 220, L = 40, R = 10, T = 10, B = 26;
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const perBucket = new Map();
  for (const p of failing) {
    const key = p.bucket_ms;
    if (!perBucket.has(key)) perBucket.set(key, []);
    perBucket.get(key).push(p);
  }
  let max = 0;
  for (const ps of perBucket.values()) max = Math.max(max, ps.reduce((a, p) => a + p.failures, 0));
  const y = (v) => H - B - (v / max) * (H - T - B);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart-svg', role: 'img', 'aria-label': 'failures over time' });
  for (const v of [0, Math.ceil(max / 2), max]) {
    if (v === Math.ceil(max / 2) && (v === 0 || v === max)) continue;
    chart.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid-line' }));
    chart.appendChild(svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, v));
  }
  const slot = ((W - L - R) * step) / (t1 - t0);
  const bw = Math.max(1, Math.min(slot - 2, 48));
  const inset = Math.max(1, (slot - bw) / 2);
  for (const [bucket, ps] of [...perBucket.entries()].sort((a, b) => a[0] - b[0])) {
    let acc = 0;
    ps.sort((a, b) => String(a.tool).localeCompare(String(b.tool)));
    for (const p of ps) {
      const y1 = y(acc + p.failures);
      const rect = svg('rect', {
        x: x(bucket) + inset, y: y1, width: bw, height: Math.max(0.5, y(acc) - y1),
        fill: colors.get(p.tool) || other, class: 'bar',
      });
      rect.appendChild(svg('title', {}, `${bucketLabel(bucket, step)} · ${p.tool}: ${p.failures} failed of ${p.calls} calls`));
      chart.appendChild(rect);
      acc += p.failures;
    }
  }
  const ticks = [t0, t0 + (t1 - t0) / 2, t1];
  ticks.forEach((t, i) => {
    const label = i === 2 && sinceMs(since) !== null ? 'now' : tickLabel(Math.round(t), step);
    chart.appendChild(svg('text', { x: x(t), y: H - 8, 'text-anchor': ['start', 'middle', 'end'][i], class: 'axis' }, label));
  });
  box.appendChild(chart);
  for (const [tool, color] of colors) {
    const sw = el('span', 'swatch');
    sw.style.background = color;
    legend.appendChild(el('span', 'legend-item', sw, tool));
  }
  if ([...new Set(failing.map((p) => p.tool))].some((t) => !colors.has(t))) {
    const sw = el('span', 'swatch');
    sw.style.background = other;
    legend.appendChild(el('span', 'legend-item', sw, 'other tools'));
  }
}

/**
 * One sparkline per tool of `tools` (a Map of tool name to its SVG): the
 * time axis is worked out once and the timeline grouped by tool once, so
 * the cost is one pass over the timeline however many tools there are.
 */
export function sparklines(tools, timeline, since) {
  const axis = buckets(timeline, since);
  const byTool = new Map();
  for (const p of timeline) {
    if (!byTool.has(p.tool)) byTool.set(p.tool, []);
    byTool.get(p.tool).push(p);
  }
  const out = new Map();
  for (const t of tools) out.set(t.tool, sparkline(t.tool, byTool.get(t.tool) || [], axis));
  return out;
}

/** A small bar chart of one tool's failures per bucket (`mine`: its timeline points). */
function sparkline(tool, mine, { bs, step, t0, t1 }) {
  const W = 160, H = 28;
  const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'spark', role: 'img', 'aria-label': `failures of ${tool} over time` });
  s.appendChild(svg('line', { x1: 0, x2: W, y1: H - 0.5, y2: H - 0.5, class: 'spark-base' }));
  if (bs.length === 0) return s;
  let max = 1;
  for (const p of mine) max = Math.max(max, p.failures || 0);
  const slot = (W * step) / (t1 - t0);
  const bw = Math.max(1, Math.min(slot - 1, 12));
  for (const p of mine) {
    if (!p.failures) continue;
    const h = Math.max(2, (p.failures / max) * (H - 2));
    const x = ((p.bucket_ms - t0) / (t1 - t0)) * W + Math.max(0, (slot - bw) / 2);
    const r = svg('rect', { x, y: H - h, width: bw, height: h, class: 'spark-bar' });
    r.appendChild(svg('title', {}, `${bucketLabel(p.bucket_ms, step)}: ${p.failures} failed of ${p.calls} calls`));
    s.appendChild(r);
  }
  return s;
}
