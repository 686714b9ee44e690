// toolwarden dashboard: polls /api/stats and /api/health every 2 s and draws
// the page. Every string from the API goes into the page through
// textContent, createTextNode or setAttribute on inert attributes (see
// dom.js): nothing is ever parsed as markup, so a tool excerpt holding HTML
// shows as text.

import {
  $, basisBadge, clear, clock, duration, el, emptyRow, failureRate, linkButton, num, pct, rateBar, rateOf,
  shortId, timeCell,
} from './dom.js';
import { renderChart, sparklines } from './chart.js';

const POLL_MS = 2000;
const LIST_LIMIT = 50;
const FETCH_TIMEOUT_MS = 10000;
const TOKEN_KEY = 'toolwarden.adminToken';

const state = {
  filters: { since: '24h', tool: '', model: '', session: '' },
  paused: false,
  timer: null,
  inFlight: false,
  knownTools: new Set(),
  knownModels: new Set(),
  openSessions: new Map(), // session id -> calls array, null while loading, or {error}
  lastStats: null,
};

// === API ===

function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (_) {
    return '';
  }
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(path) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  const ctrl = new AbortController();
  const timeout = setTimeout(() => ctrl.abort(), FETCH_TIMEOUT_MS);
  let resp;
  try {
    resp = await fetch(path, { headers, signal: ctrl.signal, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, 'gateway unreachable (' + (e && e.name === 'AbortError' ? 'timed out' : 'network error') + ')');
  } finally {
    clearTimeout(timeout);
  }
  let body = null;
  try {
    body = await resp.json();
  } catch (_) {
    body = null;
  }
  if (!resp.ok) {
    const err = body && body.error;
    const msg = err && typeof err === 'object' && err.message ? String(err.message) : typeof err === 'string' ? err : 'HTTP ' + resp.status;
    throw new ApiError(resp.status, msg);
  }
  return body;
}

/** The page's filters as URL parameters (kept in the address bar). */
function filterParams() {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) if (v) p.set(k, v);
  return p;
}

/** The /api/stats query: the filters (`since=all` for all time: without `since` it is 24 h). */
function query() {
  const p = filterParams();
  p.set('limit', String(LIST_LIMIT));
  return p.toString();
}

// === filters ===

function readFiltersFromUrl() {
  const p = new URLSearchParams(location.search);
  for (const k of Object.keys(state.filters)) {
    const v = p.get(k);
    if (v !== null) state.filters[k] = v;
  }
  $('f-since').value = state.filters.since;
  if ($('f-since').value !== state.filters.since) {
    const o = el('option', null, state.filters.since);
    o.value = state.filters.since;
    $('f-since').appendChild(o);
    $('f-since').value = state.filters.since;
  }
  $('f-session').value = state.filters.session;
}

function setFilter(name, value) {
  state.filters[name] = value || '';
  const p = filterParams();
  history.replaceState(null, '', location.pathname + (p.toString() ? '?' + p : ''));
  syncFilterInputs();
  refresh();
}

function syncFilterInputs() {
  fillSelect($('f-tool'), state.knownTools, state.filters.tool, 'all tools');
  fillSelect($('f-model'), state.knownModels, state.filters.model, 'all models');
  $('f-since').value = state.filters.since;
  if ($('f-session').value !== state.filters.session && document.activeElement !== $('f-session')) {
    $('f-session').value = state.filters.session;
  }
}

function fillSelect(select, known, current, allLabel) {
  const names = [...known];
  if (current && !known.has(current)) names.push(current);
  names.sort();
  const key = names.join('\u0000');
  if (select.dataset.key !== key) {
    clear(select);
    const all = el('option', null, allLabel);
    all.value = '';
    select.appendChild(all);
    for (const n of names) {
      const o = el('option', null, n);
      o.value = n;
      select.appendChild(o);
    }
    select.dataset.key = key;
  }
  select.value = current;
}

// === render ===

function render(stats) {
  state.lastStats = stats;
  const tools = Array.isArray(stats.tools) ? stats.tools : [];
  const models = Array.isArray(stats.models) ? stats.models : [];
  for (const t of tools) if (t.tool) state.knownTools.add(String(t.tool));
  for (const m of models) if (m.model) state.knownModels.add(String(m.model));
  syncFilterInputs();
  const totals = stats.totals && typeof stats.totals === 'object' ? stats.totals : null;
  renderCards(stats, tools, totals);
  renderChart($('chart'), $('chart-legend'), Array.isArray(stats.timeline) ? stats.timeline : [], tools, state.filters.since);
  renderTools(tools, Array.isArray(stats.timeline) ? stats.timeline : [], totals);
  renderModels(models, totals);
  renderRepairs(Array.isArray(stats.repairs) ? stats.repairs : []);
  renderRecent(Array.isArray(stats.recent_failures) ? stats.recent_failures : []);
  renderSessions(Array.isArray(stats.sessions) ? stats.sessions : []);
}

/** The summary cards. `totals` (all tools, listed or not) when the API gives them. */
function renderCards(stats, tools, totals) {
  const calls = totals ? totals.calls : tools.reduce((a, t) => a + (t.calls || 0), 0);
  const failures = totals ? totals.failures : tools.reduce((a, t) => a + (t.failures || 0), 0);
  $('c-calls').textContent = num(calls);
  $('c-failures').textContent = num(failures);
  $('c-rate').textContent = calls > 0 || failures > 0 ? pct(failureRate(failures, calls)) : '–';
  const req = stats.requests || {};
  $('c-requests').textContent = num(req.total);
  // Requests whose response passed response_parse_limit: their calls
  // may be incomplete (shown only when there are any).
  const incomplete = req.calls_incomplete > 0 ? ' · ' + num(req.calls_incomplete) + ' past the parse limit' : '';
  $('c-requests-sub').textContent =
    typeof req.errors === 'number' ? num(req.errors) + ' errors · ' + num(req.streaming) + ' streaming' + incomplete : '';
  const repairs = Array.isArray(stats.repairs) ? stats.repairs.reduce((a, r) => a + (r.count || 0), 0) : 0;
  $('c-repairs').textContent = num(repairs);
  // Requests and repairs are counted per request, not per tool: the tool
  // filter does not narrow them (the others do).
  const scope = state.filters.tool ? 'all tools: the tool filter does not apply' : '';
  for (const id of ['c-requests-scope', 'c-repairs-scope']) $(id).textContent = scope;
}

function renderTools(tools, timeline, totals) {
  const tbody = clear($('tools').tBodies[0]);
  if (tools.length === 0) {
    tbody.appendChild(emptyRow(5, 'No tool calls recorded in this range.'));
    return;
  }
  const sparks = sparklines(tools, timeline, state.filters.since);
  const rows = [...tools].sort((a, b) => (b.failures || 0) - (a.failures || 0) || (b.calls || 0) - (a.calls || 0));
  for (const t of rows) {
    const tr = el('tr', (t.failures || 0) > 0 ? 'has-failures' : null);
    tr.setAttribute('data-tool', String(t.tool));
    const name = linkButton(String(t.tool), 'show only this tool', () => setFilter('tool', state.filters.tool === t.tool ? '' : String(t.tool)));
    tr.append(
      el('td', 'name', name),
      el('td', 'n calls', num(t.calls)),
      el('td', 'n failures', num(t.failures)),
      el('td', null, rateBar(rateOf(t))),
      el('td', null, sparks.get(t.tool)),
    );
    tbody.appendChild(tr);
  }
  const more = totals ? totals.tools - tools.length : 0;
  if (more > 0) {
    const listed = tools.reduce((a, t) => ({ calls: a.calls + (t.calls || 0), failures: a.failures + (t.failures || 0) }), { calls: 0, failures: 0 });
    const tr = el('tr', 'more-row');
    tr.append(
      el('td', 'name muted', num(more) + ' more tools (fewer failures; pick one with the tool filter)'),
      el('td', 'n calls', num(totals.calls - listed.calls)),
      el('td', 'n failures', num(totals.failures - listed.failures)),
      el('td', null, ''),
      el('td', null, ''),
    );
    tbody.appendChild(tr);
  }
}

function renderModels(models, totals) {
  const tbody = clear($('models').tBodies[0]);
  if (models.length === 0) {
    tbody.appendChild(emptyRow(4, 'No model data in this range.'));
    return;
  }

  const byModel = new Map();
  for (const m of models) {
    const key = m.model === null || m.model === undefined ? '(unknown model)' : String(m.model);
    if (!byModel.has(key)) byModel.set(key, { model: key, calls: 0, failures: 0, tools: [] });
    const g = byModel.get(key);
    g.calls += m.calls || 0;
    g.failures += m.failures || 0;
    if (m.tool !== undefined) g.tools.push(m);
  }
  const groups = [...byModel.values()].sort((a, b) => rateOf(b) - rateOf(a) || b.failures - a.failures);
  for (const g of groups) {
    const tr = el('tr', 'model-row');
    tr.setAttribute('data-model', g.model);
    const name = linkButton(g.model, 'show only this model', () => setFilter('model', state.filters.model === g.model ? '' : g.model));
    tr.append(el('td', 'name', name), el('td', 'n', num(g.calls)), el('td', 'n', num(g.failures)), el('td', null, rateBar(rateOf(g))));
    tbody.appendChild(tr);
    const sub = g.tools.filter((m) => (m.failures || 0) > 0).sort((a, b) => rateOf(b) - rateOf(a));
    for (const m of sub) {
      const r = el('tr', 'sub-row');
      r.append(el('td', 'name', '↳ ' + String(m.tool)), el('td', 'n', num(m.calls)), el('td', 'n', num(m.failures)), el('td', null, rateBar(rateOf(m))));
      tbody.appendChild(r);
    }
  }
  const more = totals ? totals.model_tools - models.length : 0;
  if (more > 0) {
    const note = 'Counted from the ' + num(models.length) + ' (model, tool) pairs with the most failures; ' + num(more) + ' more are left out.';
    tbody.appendChild(emptyRow(4, note));
  }
}

function renderRepairs(repairs) {
  const tbody = clear($('repairs').tBodies[0]);
  if (repairs.length === 0) {
    tbody.appendChild(emptyRow(2, 'No repairs in this range.'));
    return;
  }
  for (const r of [...repairs].sort((a, b) => (b.count || 0) - (a.count || 0))) {
    const tr = el('tr');
    tr.append(el('td', 'name', String(r.defect)), el('td', 'n', num(r.count)));
    tbody.appendChild(tr);
  }
}

function renderRecent(recent) {
  const list = clear($('recent'));
  if (recent.length === 0) {
    list.appendChild(el('li', 'empty', 'No failures in this range.'));
    return;
  }
  for (const f of recent) {
    const li = el('li', 'failure');
    li.setAttribute('data-call-id', String(f.call_id || ''));
    const meta = el('div', 'meta',
      timeCell(f.at_ms),
      el('span', 'tool-name', String(f.tool || 'unknown')),
      basisBadge(f.basis),
      f.model ? el('span', 'muted', String(f.model)) : null,
      f.session_id ? linkButton('session ' + shortId(f.session_id), 'show only this session: ' + f.session_id, () => setFilter('session', String(f.session_id))) : null,
      f.call_id ? el('span', 'muted mono', String(f.call_id)) : null,
    );
    const excerpt = el('pre', 'excerpt', f.excerpt === null || f.excerpt === undefined ? '(no excerpt)' : String(f.excerpt));
    li.append(meta, excerpt);
    list.appendChild(li);
  }
}

function renderSessions(sessions) {
  const tbody = clear($('sessions').tBodies[0]);
  if (sessions.length === 0) {
    tbody.appendChild(emptyRow(6, 'No sessions with failures in this range.'));
    return;
  }
  for (const s of sessions) {
    const id = String(s.session_id);
    const open = state.openSessions.has(id);
    const tr = el('tr', 'session-row' + (open ? ' open' : ''));
    tr.setAttribute('data-session', id);
    const toggle = linkButton((open ? '▾ ' : '▸ ') + id, open ? 'hide tool calls' : 'show tool calls', () => toggleSession(id));
    const only = linkButton('filter', 'show only this session', () => setFilter('session', id));
    tr.append(
      el('td', 'name mono', toggle),
      el('td', 'n', num(s.calls)),
      el('td', 'n failures', num(s.failures)),
      el('td', null, timeCell(s.first_ms)),
      el('td', null, timeCell(s.last_ms)),
      el('td', 'n', only),
    );
    tbody.appendChild(tr);
    if (open) {
      const td = el('td', 'detail', sessionDetail(state.openSessions.get(id)));
      td.colSpan = 6;
      tbody.appendChild(el('tr', 'detail-row', td));
    }
  }
}

function sessionDetail(detail) {
  if (detail === null || detail === undefined) return el('p', 'muted', 'loading tool calls…');
  if (!Array.isArray(detail.calls)) return el('p', 'error-text', String(detail.error || 'could not load tool calls'));
  const calls = detail.calls;
  const table = el('table', 'grid calls');
  table.appendChild(el('thead', null, el('tr', null,
    el('th', 'n', '#'), el('th', null, 'Time'), el('th', null, 'Tool'), el('th', null, 'Call id'),
    el('th', null, 'Verdict'), el('th', null, 'Basis'), el('th', 'n', 'Exec'), el('th', null, 'Excerpt'))));
  const tbody = el('tbody');
  calls.forEach((c, i) => {
    const failed = c.failed === true;
    const verdict = c.failed === true ? 'failed' : c.failed === false ? 'ok' : 'no result';
    const tr = el('tr', failed ? 'failed' : null);
    const at = typeof c.at_ms === 'number' ? c.at_ms : typeof c.call_at_ms === 'number' ? c.call_at_ms : c.result_at_ms;
    tr.append(
      el('td', 'n', String(i + 1)),
      el('td', null, timeCell(at)),
      el('td', 'name', String(c.tool || 'unknown')),
      el('td', 'mono muted', String(c.call_id || '')),
      el('td', null, el('span', 'badge verdict-' + verdict.replace(' ', '-'), verdict)),
      el('td', null, c.basis ? (failed ? basisBadge(c.basis) : el('span', 'badge', String(c.basis))) : ''),
      el('td', 'n', typeof c.exec_ms === 'number' ? (c.exec_ms >= 1000 ? (c.exec_ms / 1000).toFixed(1) + ' s' : Math.round(c.exec_ms) + ' ms') : '–'),
      el('td', null, c.excerpt ? el('pre', 'excerpt small', String(c.excerpt)) : ''),
    );
    tbody.appendChild(tr);
  });
  table.appendChild(tbody);
  if (!detail.truncated) return table;
  // The API answers a session's newest calls only (`limit`).
  const note = el('p', 'muted', 'The newest ' + num(calls.length) + ' tool calls of this session; older ones are not shown.');
  return el('div', null, note, table);
}

async function loadSession(id) {
  try {
    // In the query: a session named `.` or `..` has no path (the browser
    // resolves `/api/sessions/..` to `/api/`).
    const page = await api('/api/sessions?id=' + encodeURIComponent(id));
    const detail = Array.isArray(page) ? { calls: page } : { calls: (page && page.calls) || [], truncated: !!(page && page.truncated) };
    if (state.openSessions.has(id)) state.openSessions.set(id, detail);
  } catch (e) {
    if (state.openSessions.has(id)) state.openSessions.set(id, { error: e.message });
  }
}

async function toggleSession(id) {
  if (state.openSessions.has(id)) {
    state.openSessions.delete(id);
  } else {
    state.openSessions.set(id, null);
    if (state.lastStats) renderSessions(state.lastStats.sessions || []);
    await loadSession(id);
  }
  if (state.lastStats) renderSessions(state.lastStats.sessions || []);
}

const HEALTH_LABELS = [
  ['events_written', 'Events written'],
  ['events_dropped', 'Events dropped', 'bad-if-positive'],
  ['write_errors', 'Write errors', 'bad-if-positive'],
  ['backlog', 'Queue backlog'],
  ['upstream_errors', 'Upstream errors', 'bad-if-positive'],
  ['database', 'Database'],
  ['uptime_s', 'Uptime'],
  ['version', 'Version'],
];

function renderHealth(health, stats) {
  const dl = clear($('health'));
  if (!health || typeof health !== 'object') {
    dl.appendChild(el('dd', 'muted', 'health unavailable'));
    return;
  }
  // /healthz nests the recorder counters; /api/health may too.
  if (health.recorder && typeof health.recorder === 'object') health = { ...health.recorder, ...health, recorder: undefined };
  const shown = new Set(['ok']);
  const add = (label, value, bad) => {
    const dt = el('dt', null, label);
    const dd = el('dd', bad ? 'bad' : null, value);
    dl.append(dt, dd);
  };
  for (const [key, label, rule] of HEALTH_LABELS) {
    if (!(key in health)) continue;
    shown.add(key);
    const v = health[key];
    const text = key === 'uptime_s' && typeof v === 'number' ? duration(v) : typeof v === 'number' ? num(v) : v === null ? '–' : String(v);
    add(label, text, rule === 'bad-if-positive' && typeof v === 'number' && v > 0);
  }
  if (!('upstream_errors' in health) && stats && stats.requests && typeof stats.requests.errors === 'number') {
    add('Request errors (range)', num(stats.requests.errors), stats.requests.errors > 0);
  }
  for (const [key, v] of Object.entries(health)) {
    if (shown.has(key) || v === undefined || (typeof v === 'object' && v !== null)) continue;
    add(key.replace(/_/g, ' '), typeof v === 'number' ? num(v) : String(v), false);
  }
}

// === status ===

function setLive(kind, text) {
  const live = $('live');
  live.className = 'live ' + kind;
  $('live-text').textContent = text;
}

function showError(message) {
  const b = $('error');
  if (message) {
    b.textContent = message;
    b.hidden = false;
  } else {
    b.hidden = true;
    b.textContent = '';
  }
}

function showAuth(message) {
  $('auth-message').textContent = message;
  $('auth').hidden = false;
}

// === polling ===

async function refresh() {
  if (state.inFlight) {
    state.again = true;
    return;
  }
  state.inFlight = true;
  clearTimeout(state.timer);
  try {
    const [statsResult, healthResult] = await Promise.allSettled([
      api('/api/stats?' + query()),
      api('/api/health'),
    ]);
    // Health is shown whenever the gateway answers, even without stats.
    const health = healthResult.status === 'fulfilled' ? healthResult.value : null;
    if (statsResult.status === 'rejected') {
      renderHealth(health, state.lastStats);
      throw statsResult.reason;
    }
    const stats = statsResult.value || {};
    await Promise.all([...state.openSessions.keys()].map(loadSession));
    $('auth').hidden = true;
    showError('');
    render(stats);
    renderHealth(health, stats);
    setLive(state.paused ? 'paused' : 'ok', (state.paused ? 'paused · ' : 'live · ') + 'updated ' + clock(Date.now()));
  } catch (e) {
    if (e.status === 401) {
      if (token()) sessionStorage.removeItem(TOKEN_KEY);
      showAuth(e.message);
      setLive('err', 'admin token needed');
    } else if (e.status === 403) {
      showError(e.message);
      setLive('err', 'access refused');
    } else if (e.status === 0) {
      showError('Could not load data: ' + e.message);
      setLive('err', 'offline · retrying');
    } else {
      showError('Could not load data: ' + e.message);
      setLive('err', 'no data · HTTP ' + e.status);
    }
  } finally {
    state.inFlight = false;
    if (state.again) {
      state.again = false;
      refresh();
    } else if (!state.paused) {
      state.timer = setTimeout(refresh, POLL_MS);
    }
  }
}

function init() {
  readFiltersFromUrl();
  $('f-since').addEventListener('change', (e) => setFilter('since', e.target.value));
  $('f-tool').addEventListener('change', (e) => setFilter('tool', e.target.value));
  $('f-model').addEventListener('change', (e) => setFilter('model', e.target.value));
  let debounce = null;
  $('f-session').addEventListener('input', (e) => {
    clearTimeout(debounce);
    debounce = setTimeout(() => setFilter('session', e.target.value.trim()), 300);
  });
  $('filters').addEventListener('submit', (e) => e.preventDefault());
  $('f-clear').addEventListener('click', () => {
    state.filters = { since: state.filters.since, tool: '', model: '', session: '' };
    $('f-session').value = '';
    setFilter('session', '');
  });
  $('pause').addEventListener('click', () => {
    state.paused = !state.paused;
    $('pause').textContent = state.paused ? 'Resume' : 'Pause';
    clearTimeout(state.timer);
    if (state.paused) setLive('paused', 'paused');
    else refresh();
  });
  $('auth-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('auth-token').value.trim();
    if (!t) return;
    try {
      sessionStorage.setItem(TOKEN_KEY, t);
    } catch (_) {
      showError('this browser does not allow sessionStorage; the token cannot be kept');
    }
    $('auth-token').value = '';
    $('auth').hidden = true;
    refresh();
  });
  refresh();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
