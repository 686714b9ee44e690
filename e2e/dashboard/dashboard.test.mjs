// End-to-end test of the gateway dashboard in headless Chromium.
//
// Expects a running gateway (GATEWAY_URL) whose upstreams point at the mock
// provider; .ci/dashboard_e2e.sh starts both. Sends conversations with
// failing tool results through the gateway, then checks the page: numbers,
// live update without reload, session drill-down, filters, and that
// script-bearing excerpts are shown as text and never run. Saves a
// screenshot to SCREENSHOT (default target/dashboard.png).
//
// Prints `dashboard-e2e: N passed, M failed`; exits non-zero on failure.

import { chromium } from 'playwright-core';

const GATEWAY = process.env.GATEWAY_URL || 'http://127.0.0.1:8080';
const SCREENSHOT = process.env.SCREENSHOT || 'target/dashboard.png';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const RUN = Date.now().toString(36); // keeps ids unique if a database is reused

const XSS_IMG = '<img src=x onerror="window.__pwned=1">';
const XSS_SCRIPT = '<script>window.__pwned=1</script>';

const S_MAIN = `e2e-main-${RUN}`;
const S_XSS = `e2e-xss-${RUN}`;
const S_CHAT = `e2e-chat-${RUN}`;
const S_OK = `e2e-ok-${RUN}`;
const S_LIVE = `e2e-live-${RUN}`;

// === tiny test runner ===

const results = [];
async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   - ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL - ${name}: ${e && e.stack ? e.stack : e}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

function eq(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

async function until(what, fn, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// === traffic through the gateway ===

async function post(path, headers, body) {
  const resp = await fetch(GATEWAY + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`POST ${path} → ${resp.status}: ${text.slice(0, 300)}`);
  return text;
}

/** An Anthropic Messages request whose last turn carries `results`. */
function anthropic(session, turns) {
  const messages = [{ role: 'user', content: 'please do the task' }];
  for (const turn of turns) {
    messages.push({
      role: 'assistant',
      content: turn.map((r) => ({ type: 'tool_use', id: r.id, name: r.tool, input: { arg: 1 } })),
    });
    messages.push({
      role: 'user',
      content: turn.map((r) => ({ type: 'tool_result', tool_use_id: r.id, is_error: r.error, content: r.content })),
    });
  }
  const tools = [...new Set(turns.flat().map((r) => r.tool))].map((name) => ({
    name, description: name, input_schema: { type: 'object' },
  }));
  return post('/v1/messages', {
    'x-api-key': 'test-key', 'anthropic-version': '2023-06-01', 'x-session-id': session,
  }, { model: 'claude-sonnet-4-5', max_tokens: 64, messages, tools });
}

function chat(session, tool, id, content) {
  return post('/v1/chat/completions', { authorization: 'Bearer test-key', 'x-session-id': session }, {
    model: 'gpt-4.1',
    messages: [
      { role: 'user', content: 'fetch it' },
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: tool, arguments: '{}' } }] },
      { role: 'tool', tool_call_id: id, content },
    ],
  });
}

async function api(path) {
  const resp = await fetch(GATEWAY + path);
  if (!resp.ok) throw new Error(`GET ${path} → ${resp.status}: ${await resp.text()}`);
  return resp.json();
}

const toolRow = (stats, tool) => (stats.tools || []).find((t) => t.tool === tool);

// === the run ===

const turn1 = [
  { id: `toolu_${RUN}_1`, tool: 'read_file', error: true, content: 'ENOENT: no such file or directory, open /repo/missing.rs' },
  { id: `toolu_${RUN}_2`, tool: 'grep_code', error: false, content: 'src/main.rs:3: fn main()' },
];
const turn2 = [{ id: `toolu_${RUN}_3`, tool: 'read_file', error: false, content: 'fn main() {}' }];

await check('traffic with failing tools goes through the gateway', async () => {
  await anthropic(S_MAIN, [turn1]);
  // The next turn re-sends the history: its results must not count twice.
  await anthropic(S_MAIN, [turn1, turn2]);
  const xss1 = [{ id: `toolu_${RUN}_x1`, tool: 'render_html', error: true, content: `template failed: ${XSS_IMG} at line 1` }];
  const xss2 = [{ id: `toolu_${RUN}_x2`, tool: 'render_html', error: true, content: `${XSS_SCRIPT} refused` }];
  await anthropic(S_XSS, [xss1]);
  await anthropic(S_XSS, [xss1, xss2]);
  await anthropic(S_OK, [[{ id: `toolu_${RUN}_ok`, tool: 'grep_code', error: false, content: 'no matches' }]]);
  await chat(S_CHAT, 'fetch_url', `call_${RUN}_1`, 'Error: connection refused while fetching the page');
});

let before;
await check('the store counts each result once (API)', async () => {
  before = await until('recorded results', async () => {
    const s = await api('/api/stats?since=all&limit=100');
    const rf = toolRow(s, 'read_file');
    const rh = toolRow(s, 'render_html');
    const gc = toolRow(s, 'grep_code');
    return rf && rf.calls >= 2 && rh && rh.calls >= 2 && gc && gc.calls >= 2 ? s : null;
  });
  eq(toolRow(before, 'read_file').calls, 2, 'read_file calls');
  eq(toolRow(before, 'read_file').failures, 1, 'read_file failures');
  eq(toolRow(before, 'render_html').failures, 2, 'render_html failures');
  eq(toolRow(before, 'grep_code').failures, 0, 'grep_code failures');
  const sessions = (before.sessions || []).map((s) => s.session_id);
  assert(sessions.includes(S_MAIN) && sessions.includes(S_XSS), `sessions with failures: ${sessions}`);
  assert(!sessions.includes(S_OK), 'a session without failures is not listed');
});

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
const outside = [];
page.on('request', (r) => {
  if (!r.url().startsWith(GATEWAY) && !r.url().startsWith('data:')) outside.push(r.url());
});

try {
  await check('GET / serves the dashboard', async () => {
    const resp = await page.goto(GATEWAY + '/?since=all');
    eq(resp.status(), 200, 'status');
    assert((resp.headers()['content-type'] || '').startsWith('text/html'), 'content type');
    await page.waitForSelector('#tools tbody tr[data-tool="read_file"]', { timeout: 10000 });
    const dash = await page.request.get(GATEWAY + '/dashboard');
    eq(dash.status(), 200, '/dashboard status');
  });

  await check('the page shows the right numbers', async () => {
    const s = await api('/api/stats?since=all&limit=50');
    const cell = (tool, cls) => page.textContent(`#tools tbody tr[data-tool="${tool}"] td.${cls}`);
    await until('read_file row', async () => (await cell('read_file', 'calls')) === '2');
    eq(await cell('read_file', 'failures'), '1', 'read_file failures cell');
    eq(await cell('render_html', 'calls'), '2', 'render_html calls cell');
    eq(await cell('render_html', 'failures'), '2', 'render_html failures cell');
    eq(await cell('grep_code', 'failures'), '0', 'grep_code failures cell');
    const rate = await page.textContent('#tools tbody tr[data-tool="read_file"] .rate-text');
    eq(rate, '50%', 'read_file failure rate');
    const total = s.tools.reduce((a, t) => a + t.failures, 0);
    const calls = s.tools.reduce((a, t) => a + t.calls, 0);
    await until('summary cards', async () => (await page.textContent('#c-failures')) === total.toLocaleString('en-US'));
    eq(await page.textContent('#c-calls'), calls.toLocaleString('en-US'), 'calls card');
    const models = await page.$$eval('#models tbody tr.model-row', (rows) => rows.map((r) => r.getAttribute('data-model')));
    assert(models.includes('claude-sonnet-4-5'), `models shown: ${models}`);
    const sessions = await page.$$eval('#sessions tbody tr.session-row', (rows) => rows.map((r) => r.getAttribute('data-session')));
    assert(sessions.includes(S_MAIN) && sessions.includes(S_XSS) && !sessions.includes(S_OK), `sessions shown: ${sessions}`);
    const bars = await page.$$eval('#chart svg rect.bar', (r) => r.length);
    assert(bars > 0, 'the failures chart has bars');
    const spark = await page.$$eval('#tools tbody tr[data-tool="render_html"] svg.spark rect', (r) => r.length);
    assert(spark > 0, 'render_html sparkline has bars');
  });

  await check('script-bearing excerpts show as text and never run', async () => {
    const texts = await page.$$eval('#recent .excerpt', (els) => els.map((e) => e.textContent));
    assert(texts.some((t) => t.includes(XSS_IMG)), `img excerpt shown literally: ${JSON.stringify(texts)}`);
    assert(texts.some((t) => t.includes(XSS_SCRIPT)), 'script excerpt shown literally');
    eq(await page.$$eval('#recent img, #recent script, main img', (e) => e.length), 0, 'elements created from excerpts');
    await page.waitForTimeout(2500); // one more poll re-renders the list
    eq(await page.evaluate(() => typeof window.__pwned), 'undefined', 'window.__pwned');
  });

  await check('a session opens to its tool calls in order', async () => {
    await page.click(`#sessions tr[data-session="${S_MAIN}"] td.name button`);
    await page.waitForSelector('#sessions tr.detail-row table.calls tbody tr', { timeout: 5000 });
    const rows = await page.$$eval('#sessions tr.detail-row table.calls tbody tr', (trs) =>
      trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    eq(rows.length, 3, 'calls in the session');
    eq(rows.map((r) => r[2]).join(','), 'read_file,grep_code,read_file', 'tools in order');
    eq(rows.map((r) => r[4]).join(','), 'failed,ok,ok', 'verdicts in order');
    eq(rows[0][5], 'explicit', 'basis of the failure');
    assert(rows[0][7].includes('ENOENT'), `excerpt of the failure: ${rows[0][7]}`);
    const xss = await api(`/api/sessions/${encodeURIComponent(S_XSS)}`);
    eq(xss.calls.length, 2, 'calls of the xss session from /api/sessions/{id}');
    eq(xss.truncated, false, 'the whole session (under the limit)');
  });

  await check('a new failure appears without a reload', async () => {
    await page.evaluate(() => { window.__sameDocument = 'yes'; });
    await anthropic(S_LIVE, [[{ id: `toolu_${RUN}_live`, tool: 'deploy_service', error: true, content: 'new failure after page load: quota exceeded' }]]);
    await page.waitForSelector('#tools tbody tr[data-tool="deploy_service"]', { timeout: 10000 });
    await until('the live failure in the latest failures', async () => {
      const texts = await page.$$eval('#recent .excerpt', (els) => els.map((e) => e.textContent));
      return texts.some((t) => t.includes('new failure after page load'));
    }, 10000);
    eq(await page.evaluate(() => window.__sameDocument), 'yes', 'same document (no reload)');
    eq(await page.textContent('#tools tbody tr[data-tool="deploy_service"] td.failures'), '1', 'deploy_service failures');
  });

  await check('filters pass through to /api/stats', async () => {
    const req = page.waitForRequest((r) => r.url().includes('/api/stats') && r.url().includes('tool=read_file') && r.url().includes('since=all'), { timeout: 5000 });
    await page.selectOption('#f-tool', 'read_file');
    await req;
    await until('only read_file listed', async () => {
      const tools = await page.$$eval('#tools tbody tr[data-tool]', (rows) => rows.map((r) => r.getAttribute('data-tool')));
      return tools.length === 1 && tools[0] === 'read_file';
    }, 5000);
    assert(new URL(page.url()).searchParams.get('tool') === 'read_file', 'filter kept in the URL');
    // Requests and repairs are not per tool: the cards say so.
    for (const card of ['#c-requests-scope', '#c-repairs-scope']) {
      assert((await page.textContent(card)).includes('all tools'), `${card} names its scope`);
    }
    await page.click('#f-clear');
    await until('the scope notes go', async () => (await page.textContent('#c-requests-scope')) === '', 5000);
    await until('all tools again', async () => (await page.$$('#tools tbody tr[data-tool]')).length >= 4, 5000);
  });

  await check('gateway health is shown', async () => {
    const health = await api('/api/health');
    assert(typeof health === 'object' && health !== null, 'health JSON');
    const labels = await page.$$eval('#health dt', (dts) => dts.map((d) => d.textContent));
    assert(labels.includes('Events written'), `health labels: ${labels}`);
    assert(labels.includes('Events dropped'), `health labels: ${labels}`);
  });

  await check('the page loads nothing from outside and throws no errors', async () => {
    eq(outside.length, 0, `requests outside the gateway ${JSON.stringify(outside)}`);
    eq(pageErrors.length, 0, `page errors ${JSON.stringify(pageErrors)}`);
  });

  await check('screenshot saved', async () => {
    await page.selectOption('#f-since', 'all');
    await page.waitForTimeout(500);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
} finally {
  await browser.close();
}

const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`dashboard-e2e: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
