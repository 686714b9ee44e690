// The dashboard's firing-alerts strip (issue 19): polls /api/alerts every
// 5 s and shows the alerts firing now above the page, or nothing. Text
// only (textContent), like the rest of the page.
const TOKEN_KEY = 'toolwarden.adminToken';

function strip() {
  let el = document.getElementById('alerts-strip');
  if (!el) {
    el = document.createElement('div');
    el.id = 'alerts-strip';
    el.className = 'banner';
    el.setAttribute('role', 'status');
    el.hidden = true;
    const header = document.querySelector('header.top');
    if (header) header.after(el); else document.body.prepend(el);
  }
  return el;
}

function describe(a) {
  const pct = (v) => (v * 100).toFixed(1) + '%';
  const value = a.rule.endsWith('_rate') ? pct(a.value) + ' > ' + pct(a.threshold)
    : a.rule === 'tool_exec_time' ? (a.value / 1000).toFixed(1) + ' s > ' + (a.threshold / 1000).toFixed(1) + ' s'
    : a.value + ' > ' + a.threshold;
  // The key's model is `*` for every model; a model named `*` is `%2A` there.
  const allModels = String(a.alert_key || '').split('|')[2] === '*';
  // A tool rule (`tool_…`) names its tool, one a client named `*` too; the
  // rules over requests have the tool `*`, which is no tool.
  const toolRule = String(a.rule).startsWith('tool_');
  const where = [toolRule ? 'tool ' + a.tool : '', allModels ? '' : 'model ' + a.model,
    a.instance ? 'gateway ' + a.instance : ''].filter(Boolean).join(', ');
  return a.rule + (where ? ' (' + where + ')' : '') + ': ' + value;
}

async function poll() {
  const headers = {};
  let t = '';
  try { t = sessionStorage.getItem(TOKEN_KEY) || ''; } catch (_) { /* no storage */ }
  if (t) headers.Authorization = 'Bearer ' + t;
  try {
    const resp = await fetch('/api/alerts', { headers, cache: 'no-store' });
    if (!resp.ok) return;
    const doc = await resp.json();
    const el = strip();
    const firing = Array.isArray(doc.firing) ? doc.firing : [];
    el.hidden = firing.length === 0;
    el.textContent = firing.length === 0 ? ''
      : '⚠ ' + firing.length + ' alert' + (firing.length > 1 ? 's' : '') + ' firing — '
        + firing.map(describe).join(' · ');
  } catch (_) { /* the page's own poll reports connectivity */ }
}

poll();
setInterval(poll, 5000);
