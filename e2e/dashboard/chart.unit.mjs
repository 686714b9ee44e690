// Unit tests of the dashboard's chart.js in node, without a browser:
//   node --test e2e/dashboard/chart.unit.mjs
// The shipped modules are copied into a temporary folder marked as ES
// modules and run against a stub DOM that records what is built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const assets = join(dirname(fileURLToPath(import.meta.url)), '../../crates/gateway/src/dashboard/assets');
const dir = mkdtempSync(join(tmpdir(), 'toolwarden-chart-'));
writeFileSync(join(dir, 'package.json'), '{"type": "module"}');
for (const f of ['chart.js', 'dom.js']) copyFileSync(join(assets, f), join(dir, f));

/** A node of the stub DOM: children, attributes, text. */
class Node {
  constructor(tag) {
    this.tag = tag;
    this.children = [];
    this.attrs = {};
    this.textContent = '';
    this.style = {};
  }
  appendChild(c) { this.children.push(c); return c; }
  append(...cs) { for (const c of cs) this.appendChild(c); }
  setAttribute(k, v) { this.attrs[k] = v; }
  get firstChild() { return this.children[0] || null; }
  removeChild(c) { this.children.splice(this.children.indexOf(c), 1); }
  count(tag) { return (this.tag === tag ? 1 : 0) + this.children.reduce((a, c) => a + (c.count ? c.count(tag) : 0), 0); }
}
globalThis.document = {
  createElement: (t) => new Node(t),
  createElementNS: (_, t) => new Node(t),
  createTextNode: (t) => ({ text: t }),
};

const chart = await import(pathToFileURL(join(dir, 'chart.js')).href);
const { UNIT_MS } = chart;

/** `tools` tools with a failure in each of the last 24 hour buckets. */
function busyDay(tools) {
  const now = Math.floor(Date.now() / UNIT_MS.h) * UNIT_MS.h;
  const list = [];
  const timeline = [];
  for (let i = 0; i < tools; i++) {
    const tool = 'mcp__srv__tool' + i;
    list.push({ tool, calls: 48, failures: 24 });
    for (let h = 0; h < 24; h++) timeline.push({ tool, bucket_ms: now - h * UNIT_MS.h, calls: 2, failures: 1 });
  }
  return { tools: list, timeline };
}

test('sparklines read the timeline once, however many tools (review #1)', () => {
  const { tools, timeline } = busyDay(2000);
  // Counts the passes over the timeline (map, filter, for…of, spread).
  let passes = 0;
  const counted = new Proxy(timeline, {
    get(target, key, recv) {
      if (key === 'map' || key === 'filter' || key === 'forEach' || key === Symbol.iterator) passes++;
      return Reflect.get(target, key, recv);
    },
  });
  const sparks = chart.sparklines(tools, counted, '24h');
  assert.ok(passes <= 3, `${passes} passes over the timeline for 2000 tools`);
  assert.equal(sparks.size, 2000);
  // Each tool's sparkline holds its own 24 bars, no other tool's.
  for (const t of [tools[0], tools[1999]]) assert.equal(sparks.get(t.tool).count('rect'), 24);
  // A tool without timeline points (beyond the listed ones) gets an empty line.
  const lone = chart.sparklines([{ tool: 'quiet', calls: 1, failures: 0 }], counted, '24h');
  assert.equal(lone.get('quiet').count('rect'), 0);
});

test('day buckets are UTC days, named by their UTC date in every time zone (review #5)', () => {
  const day = Date.UTC(2026, 10, 29); // the store's bucket of 2026-11-29 15:00Z
  const saved = process.env.TZ;
  try {
    for (const tz of ['UTC', 'America/Los_Angeles', 'Asia/Tokyo', 'Pacific/Kiritimati']) {
      process.env.TZ = tz;
      assert.equal(chart.tickLabel(day, UNIT_MS.d), '2026-11-29', tz);
      assert.equal(chart.bucketLabel(day, UNIT_MS.d), '2026-11-29 (UTC day)', tz);
    }
    // An hour bucket starts on the half hour in India: named so.
    process.env.TZ = 'Asia/Kolkata';
    assert.equal(chart.tickLabel(Date.UTC(2026, 10, 29, 3), UNIT_MS.h), '08:30');
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('a rate the page works out follows the store rule: failures folded at their own time can outnumber calls', async () => {
  const dom = await import(pathToFileURL(join(dir, 'dom.js')).href);
  assert.equal(dom.failureRate(0, 0), 0);
  assert.equal(dom.failureRate(3, 0), 1, 'failures without calls in the window: 100 %, not 0 %');
  assert.equal(dom.failureRate(5, 2), 1, 'more failures than calls: 100 %, not 250 %');
  assert.equal(dom.failureRate(1, 4), 0.25);
  assert.equal(dom.rateOf({ calls: 2, failures: 5 }), 1);
  assert.equal(dom.rateOf({ calls: 2, failures: 5, failure_rate: 0.5 }), 0.5, "the API's own rate first");
  assert.equal(dom.pct(dom.rateOf({ calls: 0, failures: 3 })), '100%');
});
