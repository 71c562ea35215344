/**
 * The dashboard: one static page with its style and script inline (no build
 * step, no CDN). The script uses no template literals, so it sits in this
 * module as plain text; the page server hashes the style and the script for
 * its Content-Security-Policy. Everything from the daemon is written with
 * textContent, never as HTML: plugin names and errors come from plugins.
 */

export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5b636d; --line: #d5d9de;
  --ok: #116329; --warn: #8a5a00; --bad: #b3261e; --focus: #0b57d0; --head: #f4f6f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #14171a; --muted: #9aa3ad;
  --line: #30363d; --ok: #4ac26b; --warn: #d6a419; --bad: #ff7b72; --focus: #79a6ff; --head: #1c2126; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--focus); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5em 1em; }
.skip:focus { left: .5em; }
header { display: flex; flex-wrap: wrap; gap: .5em 1.5em; align-items: baseline; padding: .8em 1em; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.2em; margin: 0; }
nav ul { display: flex; flex-wrap: wrap; gap: .3em 1em; list-style: none; margin: 0; padding: 0; }
#live { margin-left: auto; color: var(--muted); }
#live.ok { color: var(--ok); } #live.warn { color: var(--warn); }
main { padding: 0 1em 2em; max-width: 1400px; }
section { margin-top: 1.4em; }
section h2 { font-size: 1.05em; margin: 0 0 .4em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .92em; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.wrap { max-width: 36em; overflow-wrap: anywhere; }
.empty, .note { color: var(--muted); }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 640px) { body { font-size: 14px; } th, td { padding: .25em .4em; } #live { margin-left: 0; } }
`;

export const DASHBOARD_SCRIPT = `
(function () {
  'use strict';
  history.replaceState(null, '', '/');
  var sections = ['overview', 'plugins', 'sockets', 'devices', 'csi', 'dra', 'cluster'];

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function show(v) { return v === null || v === undefined || v === '' ? '-' : String(v); }
  function ago(iso) {
    if (!iso) return '-';
    var s = Math.round((Date.now() - Date.parse(iso)) / 1000);
    if (isNaN(s)) return '-';
    var a = Math.abs(s), t = a < 90 ? a + 's' : a < 5400 ? Math.round(a / 60) + 'm' : Math.round(a / 3600) + 'h';
    return s >= 0 ? t + ' ago' : 'in ' + t;
  }
  function fill(id, nodes) {
    var body = document.getElementById(id + '-body');
    body.replaceChildren.apply(body, nodes);
  }
  function note(text, cls) { return el('p', cls || 'note', text); }
  /** rows: arrays of cells; a cell is a string or [text, className]. */
  function table(label, headers, rows, empty) {
    if (rows.length === 0) return note(empty);
    var wrap = el('div', 'scroll');
    wrap.tabIndex = 0;
    wrap.setAttribute('role', 'region');
    wrap.setAttribute('aria-label', label);
    var t = el('table'), head = el('tr');
    headers.forEach(function (h) { var th = el('th', '', h); th.scope = 'col'; head.appendChild(th); });
    var thead = el('thead'); thead.appendChild(head); t.appendChild(thead);
    var tbody = el('tbody');
    rows.forEach(function (row) {
      var tr = el('tr');
      row.forEach(function (cell) {
        var td = Array.isArray(cell) ? el('td', cell[1], show(cell[0])) : el('td', 'wrap', show(cell));
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    t.appendChild(tbody);
    wrap.appendChild(t);
    return wrap;
  }
  function pairs(list) {
    var dl = el('dl');
    list.forEach(function (p) { dl.appendChild(el('dt', '', p[0])); dl.appendChild(el('dd', p[2] || '', show(p[1]))); });
    return dl;
  }
  function get(path) {
    return fetch(path, { headers: { accept: 'application/json' }, credentials: 'same-origin' }).then(function (res) {
      return res.json().then(function (body) { return { status: res.status, body: body }; },
        function () { return { status: res.status, body: null }; });
    }, function (err) { return { status: 0, body: { error: { message: String(err) } } }; });
  }
  function failed(answer) {
    var e = answer.body && answer.body.error;
    return note('unavailable: ' + (e ? e.message : 'HTTP ' + answer.status), 'bad');
  }
  var stateClass = { registered: 'ok', observed: 'ok', pending: 'warn', backoff: 'warn', stale: 'warn', failed: 'bad', unreachable: 'bad' };

  function overview(a) {
    if (a.status !== 200) return [failed(a)];
    var s = a.body, c = s.counts || {}, st = s.storage || {}, h = st.health;
    var storage = !h ? ['-', ''] : h.state === 'ok' ? ['ok', 'ok']
      : ['failing since ' + ago(h.since) + ': ' + (h.lastError ? h.lastError.message : ''), 'bad'];
    var list = [
      ['readiness', s.ready ? 'ready' : show(s.state), s.ready ? 'ok' : 'warn'],
      ['version', s.version], ['mode', s.mode], ['uptime', s.uptimeSeconds + 's'],
      ['plugins', c.plugins + ' (' + c.instances + ' instances)'],
      ['sockets', c.sockets ? c.sockets.total : '-'],
      ['storage', storage[0], storage[1]], ['state db', st.path], ['plugins dir', s.pluginsDir]
    ];
    if (st.corruption) list.push(['corruption', 'set aside to ' + st.corruption.movedTo, 'bad']);
    return [pairs(list)];
  }
  function plugins(a) {
    if (a.status !== 200) return [failed(a)];
    return [table('plugins', ['Type', 'Name', 'Versions', 'Instances', 'Registered', 'Socket'],
      a.body.plugins.map(function (p) {
        return [p.type, [p.name + (p.observed ? ' (observed)' : ''), 'plugin-name'], p.versions.join(', '),
          String(p.instances), ago(p.registeredAt), p.socketPath];
      }), 'no plugins registered')];
  }
  function sockets(a) {
    if (a.status !== 200) return [failed(a)];
    return [table('sockets', ['Socket', 'State', 'Plugin', 'Attempts', 'Last error', 'Retry'],
      a.body.sockets.map(function (s) {
        return [s.socketPath, [s.state, stateClass[s.state] || ''], s.plugin ? s.plugin.type + ' ' + s.plugin.name : '-',
          String(s.attempts), s.lastError ? s.lastError.code + ': ' + s.lastError.message : '-', ago(s.retryAt)];
      }), 'no sockets in the plugins directory')];
  }
  function devices(a) {
    if (a.status !== 200) return [failed(a)];
    return [table('devices', ['Resource', 'State', 'Healthy', 'Unhealthy', 'Allocated', 'Allocations'],
      a.body.resources.map(function (r) {
        var used = 0;
        var allocs = r.allocations.map(function (x) { used += x.deviceIds.length; return x.workload + ': ' + x.deviceIds.join(','); });
        return [r.resource, r.state, [String(r.healthy), 'ok'], [String(r.unhealthy), r.unhealthy ? 'bad' : ''],
          String(used), allocs.join('; ')];
      }), 'no device plugin resources')];
  }
  function csi(a) {
    if (a.status === 404) return [note('no CSI handler on this daemon')];
    if (a.status !== 200) return [failed(a)];
    return [table('CSI drivers', ['Driver', 'Node ID', 'Ready', 'Max volumes', 'Topology', 'Registered'],
      a.body.drivers.map(function (d) {
        return [d.name, d.nodeId, [d.ready === null ? '-' : d.ready ? 'yes' : 'no', d.ready ? 'ok' : 'warn'],
          d.maxVolumesPerNode, d.topologyKeys.join(', '), ago(d.registeredAt)];
      }), 'no CSI drivers registered')];
  }
  function dra(a) {
    if (a.status === 404) return [note('no DRA handler on this daemon')];
    if (a.status !== 200) return [failed(a)];
    return [table('DRA drivers', ['Driver', 'Usable', 'Chosen', 'Instances (connected/all)'],
      a.body.drivers.map(function (d) {
        var up = d.instances.filter(function (i) { return i.connected; }).length;
        return [d.name, [d.usable ? 'yes' : 'no since ' + ago(d.unusableSince), d.usable ? 'ok' : 'bad'],
          d.chosen ? d.chosen.endpoint + ' (' + d.chosen.service + ')' : '-', up + '/' + d.instances.length];
      }), 'no DRA drivers registered')];
  }
  function cluster(a) {
    var e = a.body && a.body.error;
    if (a.status === 404 && e && e.code === 'BERTH_CLUSTER_DISABLED') return [note('the fleet view is not configured on this daemon')];
    if (a.status !== 200) return [failed(a)];
    var b = a.body, me = b.self || {};
    return [pairs([
      ['this node', me.node], ['lease', me.leaseState, me.leaseState === 'held' ? 'ok' : 'warn'],
      ['view', b.stale ? 'stale' : 'current', b.stale ? 'warn' : 'ok'], ['revision', b.revision]
    ]), table('cluster nodes', ['Node', 'Plugins', 'Daemon', 'Started'],
      b.nodes.map(function (n) { return [n.node, String(n.plugins), n.daemon, ago(new Date(n.startedAt).toISOString())]; }),
      'no nodes publish to the fleet view')];
  }

  var views = {
    overview: ['/v1/status', overview], plugins: ['/v1/plugins', plugins], sockets: ['/v1/sockets', sockets],
    devices: ['/v1/devices', devices], csi: ['/v1/csi/drivers', csi], dra: ['/v1/dra/drivers', dra],
    cluster: ['/v1/cluster/nodes', cluster]
  };
  var running = false, again = false;
  function refresh() {
    if (running) { again = true; return; }
    running = true;
    Promise.all(sections.map(function (id) {
      return get(views[id][0]).then(function (a) { fill(id, views[id][1](a)); });
    })).then(function () {
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
      running = false;
      if (again) { again = false; refresh(); }
    });
  }
  var timer = null;
  function soon() { if (timer === null) timer = setTimeout(function () { timer = null; refresh(); }, 150); }

  var live = document.getElementById('live');
  var kinds = ['discovered', 'socket-removed', 'registered', 'updated', 'deregistered', 'failed', 'lagged',
    'driver-unusable', 'storage-error', 'devices-changed', 'reset', 'message'];
  function connect() {
    var source = new EventSource('/v1/events');
    source.onopen = function () { live.textContent = 'live'; live.className = 'ok'; refresh(); };
    source.onerror = function () { live.textContent = 'reconnecting'; live.className = 'warn'; };
    kinds.forEach(function (k) { source.addEventListener(k, soon); });
  }
  refresh();
  connect();
  // Times shown as "5s ago", and state that changes without an event on /v1/events (the fleet view).
  setInterval(refresh, 10000);
})();
`;

const NAV = [
  ['overview', 'Overview'],
  ['plugins', 'Plugins'],
  ['sockets', 'Sockets'],
  ['devices', 'Devices'],
  ['csi', 'CSI drivers'],
  ['dra', 'DRA drivers'],
  ['cluster', 'Fleet'],
] as const;

export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>berth dashboard</title>
<link rel="icon" href="data:,">
<style>${DASHBOARD_STYLE}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<h1>berth</h1>
<nav aria-label="Sections"><ul>
${NAV.map(([id, title]) => `<li><a href="#${id}">${title}</a></li>`).join('\n')}
</ul></nav>
<span id="live" role="status" aria-live="polite">connecting</span>
<span id="updated" class="note"></span>
</header>
<main id="main" tabindex="-1">
${NAV.map(
  ([id, title]) => `<section id="${id}" tabindex="-1" aria-labelledby="${id}-title">
<h2 id="${id}-title">${title}</h2>
<div id="${id}-body"><p class="note">loading</p></div>
</section>`,
).join('\n')}
</main>
<script>${DASHBOARD_SCRIPT}</script>
</body>
</html>
`;
