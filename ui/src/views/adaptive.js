// Adaptive routing (superadmin): the deployment-wide policy form, and a live scoreboard of the
// telemetry nodes post every 15 s: per route and target the blended score, its components, the
// raw signals, picks and the decision split, and whether the route has engaged yet.
import { api } from '../api.js';
import { h, clear, badge, emptyState, section, num, int, ago } from '../dom.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from '../form_errors.js';

const REFRESH_MS = 3000;
const FIELDS = [
  { key: 'latency_weight', label: 'Latency weight', step: 'any', min: '0' },
  { key: 'cost_weight', label: 'Cost weight', step: 'any', min: '0' },
  { key: 'load_weight', label: 'Load weight', step: 'any', min: '0' },
  { key: 'exploration_ratio', label: 'Exploration ratio', step: 'any', min: '0', max: '0.5' },
  { key: 'min_samples', label: 'Min samples', step: '1', min: '0' },
];
const DECISIONS = ['blend', 'exploration', 'probe', 'fallback'];

function policyForm(answer, ctx, onSaved) {
  const policy = answer.policy ?? {};
  const touched = new Set();
  const enabled = h('input', { type: 'checkbox', id: 'policy-enabled', dataset: { field: 'enabled', write: '' }, checked: Boolean(policy.enabled) });
  enabled.addEventListener('change', () => touched.add('enabled'));
  const inputs = {};
  const fieldEls = FIELDS.map((f) => {
    const input = h('input', { type: 'number', id: `policy-${f.key}`, step: f.step, min: f.min, max: f.max, value: policy[f.key] ?? '', dataset: { field: f.key, write: '' } });
    input.addEventListener('input', () => touched.add(f.key));
    inputs[f.key] = input;
    return h('div', { class: 'field' }, h('label', { for: `policy-${f.key}` }, f.label), input, errorSlot(f.key));
  });
  const status = h('div', { class: 'success', role: 'status', hidden: true });
  const affects = h('span', { class: 'muted' });
  const showAffected = (routes) => {
    affects.textContent = `Affects: ${routes?.length ? routes.join(', ') : 'no adaptive route yet'}`;
  };
  showAffected(answer.affected_routes);
  const form = h('form', { class: 'form', novalidate: true, id: 'adaptive-policy' },
    formErrorSlot(),
    h('div', { class: 'field inline' }, enabled, h('label', { for: 'policy-enabled' }, 'Enabled: adaptive routes blend once they have evidence'), errorSlot('enabled')),
    h('div', { class: 'fields-row' }, fieldEls),
    h('p', { class: 'muted' }, 'The blend scores each target by latency, price and load (min-max scored over the route’s targets), weighted as above; an all-zero blend is refused. Until a target has min samples, warm-up probes and the fallback stack pick.'),
    status,
    h('div', { class: 'toolbar' },
      h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Save policy'),
      h('span', { class: 'spacer' }),
      affects));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    status.hidden = true;
    // The API merges the keys sent: only what the operator changed goes.
    const change = {};
    if (touched.has('enabled')) change.enabled = enabled.checked;
    for (const f of FIELDS) {
      if (!touched.has(f.key)) continue;
      const raw = inputs[f.key].value.trim();
      const n = Number(raw);
      change[f.key] = raw !== '' && Number.isFinite(n) ? n : raw;
    }
    try {
      const saved = await api.put('/adaptive-routing-policy', change);
      touched.clear();
      status.textContent = `Saved (configuration version ${saved.version}). Nodes apply it within a second.`;
      status.hidden = false;
      showAffected(saved.affected_routes);
      onSaved(saved);
    } catch (err) {
      showError(form, err);
    }
  });
  return form;
}

function sampleTable(entry) {
  const s = entry.sample ?? {};
  const targets = s.targets ?? [];
  const d = s.decisions ?? {};
  const engaged = Boolean(s.engaged);
  const head = h('div', { class: 'toolbar' },
    h('strong', { class: 'mono' }, entry.node_id),
    engaged ? badge('engaged', 'ok') : badge('not engaged yet', 'warn'),
    h('span', { class: 'muted' }, `reported ${ago(entry.age_seconds)}`),
    h('span', { class: 'spacer' }),
    h('span', { class: 'muted' }, `served ${int(s.served ?? 0)} · `,
      DECISIONS.map((k) => `${k} ${int(d[k] ?? 0)}`).join(' · ')));
  const warming = engaged ? null : h('p', { class: 'hint' },
    s.policy && s.policy.enabled === false
      ? 'The policy is off: every pick runs the fallback stack.'
      : `Warming up: the blend engages once targets have ${s.policy?.min_samples ?? 'enough'} latency samples; probes and the fallback stack pick until then.`);
  // The target the blend would pick now: the highest known score.
  const best = Math.max(...targets.map((t) => (typeof t.score === 'number' ? t.score : -Infinity)));
  const rows = targets.map((t) => {
    const c = t.components ?? {};
    const sig = t.signals ?? {};
    const byDecision = t.picks_by_decision ?? {};
    const leads = engaged && typeof t.score === 'number' && t.score === best;
    return h('tr', { class: leads ? 'leader' : null, dataset: { target: t.target }, title: leads ? 'the blend’s pick now' : null },
      h('td', {}, t.target),
      h('td', { class: 'num score', dataset: { score: t.score === null || t.score === undefined ? '' : String(t.score) } }, num(t.score, 3)),
      h('td', { class: 'num' }, num(c.latency, 3)),
      h('td', { class: 'num' }, num(c.cost, 3)),
      h('td', { class: 'num' }, num(c.load, 3)),
      h('td', { class: 'num' }, num(sig.latency_ms, 1)),
      h('td', { class: 'num' }, num(sig.price, 4)),
      h('td', { class: 'num' }, sig.in_flight === null || sig.in_flight === undefined ? '—' : int(sig.in_flight)),
      h('td', { class: 'num' }, int(t.picks ?? 0)),
      h('td', { class: 'num', title: DECISIONS.join(' / ') }, DECISIONS.map((k) => int(byDecision[k] ?? 0)).join(' / ')),
      h('td', { class: 'num' }, t.seconds_since_last_pick === null || t.seconds_since_last_pick === undefined ? '—' : ago(t.seconds_since_last_pick)));
  });
  return h('div', { class: 'sample', dataset: { node: entry.node_id, engaged: String(engaged) } },
    head, warming,
    h('div', { class: 'scroll' }, h('table', { class: 'grid compact' },
      h('thead', {},
        h('tr', {}, h('th', {}), h('th', { class: 'num' }, 'Blended'), h('th', { colspan: '3', class: 'num' }, 'Components'),
          h('th', { colspan: '3', class: 'num' }, 'Signals'), h('th', { colspan: '3', class: 'num' }, 'Picks')),
        h('tr', {}, ['Target', 'Score', 'Latency', 'Cost', 'Load', 'Latency ms', 'Price', 'In flight', 'Total', 'Blend/expl./probe/fallb.', 'Last']
          .map((l, i) => h('th', { class: i ? 'num' : null }, l)))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: '11', class: 'empty' }, 'No targets reported.'))))));
}

export default {
  async render(root, ctx) {
    const formBox = h('div');
    const board = h('div', { class: 'scoreboard' });
    let affected = [];
    const answer = await api.get('/adaptive-routing-policy');
    affected = answer.affected_routes ?? [];
    clear(formBox, policyForm(answer, ctx, (saved) => { affected = saved.affected_routes ?? []; }));
    if (!ctx.alive()) return;
    clear(root, section('Policy', formBox),
      section('Scoreboard', h('p', { class: 'muted' }, `Each node posts its view every 15 s; this page refreshes every ${REFRESH_MS / 1000} s. Higher scores win.`), board));
    await ctx.every(REFRESH_MS, async () => {
      const telemetry = (await api.get('/adaptive-routing-telemetry'))?.data ?? [];
      if (!ctx.alive()) return;
      const byRoute = new Map(affected.map((r) => [r, []]));
      for (const entry of telemetry) {
        if (!byRoute.has(entry.route)) byRoute.set(entry.route, []);
        byRoute.get(entry.route).push(entry);
      }
      if (byRoute.size === 0) {
        clear(board, emptyState('No adaptive route.', 'Give a route strategy "adaptive" to see it here.'));
        return;
      }
      clear(board, [...byRoute.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([route, entries]) => {
        const engaged = entries.some((e) => e.sample?.engaged);
        return h('div', { class: 'route-score', dataset: { route, engaged: String(engaged) } },
          h('h3', {}, route, ' ', entries.length === 0 ? badge('no telemetry yet', '') : engaged ? badge('engaged', 'ok') : badge('not engaged yet', 'warn')),
          entries.length
            ? entries.sort((a, b) => a.node_id.localeCompare(b.node_id)).map(sampleTable)
            : h('p', { class: 'muted' }, 'No node has reported this route in the last minute (nodes post every 15 s, once it has traffic).'));
      }));
    });
  },
};
