// Policy mode: the plugin weights of a strategy = "policy" route (least_inflight,
// session_affinity, decision_service), or free inputs to explore, and the session flip threshold
// those weights give for a number of targets, as the control plane computes it
// (/api/v1/policy-thresholds: the balancer's own code, never recomputed here).
import { api, list, seg } from '../api.js';
import { h, clear, badge, section, emptyState } from '../dom.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from '../form_errors.js';

const PLUGINS = [
  { key: 'least_inflight', label: 'least_inflight', fallback: 1, help: 'votes for the instances with the fewest requests in flight' },
  { key: 'session_affinity', label: 'session_affinity', fallback: 1, help: 'votes for the instance a session’s key ranks first' },
  { key: 'decision_service', label: 'decision_service', fallback: 10, help: 'votes for the model a decision service picks' },
];
const FREE = '';
// The target counts the thresholds are computed for.
const MIN_TARGETS = 2;
const MAX_TARGETS = 64;

export default {
  async render(root, ctx) {
    const [routes, catalog] = await Promise.all([list('/routes'), list('/catalog')]);
    if (!ctx.alive()) return;
    const policyRoutes = routes.filter((r) => r.strategy === 'policy');
    const candidates = new Map(catalog.filter((e) => e.kind === 'route')
      .map((e) => [e.name, e.targets.reduce((n, t) => n + (Number(t.instances) || 1), 0)]));

    const picker = h('select', { id: 'policy-route' },
      h('option', { value: FREE }, 'Free exploration (no route)'),
      policyRoutes.map((r) => h('option', { value: r.name }, `${r.name}${r.read_only ? ' (rolter.toml)' : ''}`)));
    const wanted = ctx.params.get('route');
    if (wanted && policyRoutes.some((r) => r.name === wanted)) picker.value = wanted;
    const editorBox = h('div');
    clear(root,
      section(null,
        h('p', { class: 'muted' }, 'A policy route adds up weighted plugin votes. With least_inflight and session_affinity both on, a conversation stays on its owner until the owner is busy enough that an idle target wins.'),
        h('div', { class: 'field' }, h('label', { for: 'policy-route' }, 'Route'), picker),
        policyRoutes.length ? null : h('p', { class: 'muted' }, 'No route has strategy "policy" yet: explore with free inputs.')),
      editorBox);
    const open = () => {
      const route = policyRoutes.find((r) => r.name === picker.value) ?? null;
      clear(editorBox, editor(route, route ? candidates.get(route.name) ?? route.targets.length : 3, ctx));
    };
    picker.addEventListener('change', open);
    open();
  },
};

function editor(route, targetCount, ctx) {
  const editable = Boolean(route) && ctx.canWrite && !route.read_only;
  const policy = route?.policy ?? {};
  const touched = new Set();
  const controls = {};
  const result = h('div', { class: 'threshold', role: 'status', 'aria-live': 'polite' });
  let timer = null;
  let asked = 0;
  const schedule = () => { clearTimeout(timer); timer = setTimeout(ask, 200); };
  ctx.onCleanup(() => clearTimeout(timer));

  const rows = PLUGINS.filter((p) => p.key !== 'decision_service' || !route || policy.decision_service).map((p) => {
    const present = route ? policy[p.key] !== undefined : p.key !== 'decision_service';
    const on = h('input', { type: 'checkbox', id: `plugin-${p.key}`, checked: present, dataset: { field: `policy.${p.key}` } });
    const weight = h('input', { type: 'number', step: 'any', min: '0', id: `weight-${p.key}`,
      value: String(policy[p.key]?.weight ?? p.fallback), dataset: { field: `policy.${p.key}.weight` } });
    // decision_service needs its provider and model: only its weight is edited here.
    if (route && p.key === 'decision_service') on.disabled = true;
    if (editable) { on.dataset.write = ''; weight.dataset.write = ''; }
    on.addEventListener('change', () => { touched.add(`${p.key}.on`); weight.disabled = !on.checked; schedule(); });
    weight.addEventListener('input', () => { touched.add(`${p.key}.weight`); schedule(); });
    weight.disabled = !on.checked;
    controls[p.key] = { on, weight };
    return h('tr', { dataset: { plugin: p.key } },
      h('td', {}, h('label', { class: 'field inline', for: `plugin-${p.key}` }, on, p.label)),
      h('td', { class: 'weight' }, weight, errorSlot(`policy.${p.key}.weight`)),
      h('td', { class: 'muted' }, p.help));
  });
  const targets = h('input', { type: 'number', id: 'policy-targets', min: String(MIN_TARGETS), max: String(MAX_TARGETS), step: '1', value: String(targetCount), dataset: { field: 'targets' } });
  targets.addEventListener('input', schedule);

  async function ask() {
    const li = controls.least_inflight;
    const sa = controls.session_affinity;
    const n = Number(targets.value);
    if (!li.on.checked || !sa.on.checked) {
      clear(result, h('p', { class: 'muted' }, 'The flip threshold applies when both least_inflight and session_affinity are on.'));
      delete result.dataset.flip;
      return;
    }
    const a = Number(li.weight.value);
    const b = Number(sa.weight.value);
    if (!Number.isInteger(n) || n < MIN_TARGETS || n > MAX_TARGETS || !(a > 0) || !(b > 0)) {
      clear(result, h('p', { class: 'error' }, n === 1
        ? 'With one target a session has nowhere to move.'
        : `Give a whole number of targets from ${MIN_TARGETS} to ${MAX_TARGETS}, and weights above 0.`));
      delete result.dataset.flip;
      return;
    }
    const mine = ++asked;
    const params = new URLSearchParams({ targets: String(n), ratios: `${a}:${b}` });
    try {
      const answer = await api.get(`/policy-thresholds?${params}`);
      if (mine !== asked || !ctx.alive()) return;
      const row = answer?.data?.[0];
      if (!row) return;
      const flip = row.flip === null ? 'never' : String(row.flip);
      result.dataset.targets = String(row.targets);
      result.dataset.ratio = row.ratio;
      result.dataset.flip = flip;
      result.dataset.tieAt = row.tie_at === null ? '' : String(row.tie_at);
      clear(result,
        h('div', { class: 'flip' }, flip === 'never' ? 'never' : `${flip} in flight`),
        h('p', {}, row.flip === null
          ? `With ${n} targets at ${row.ratio}, a session never moves: it stays on its owner however many requests the owner has in flight.`
          : `With ${n} targets at ${row.ratio}, a session moves to another target once its owner has ${row.flip} ${row.flip === 1 ? 'request' : 'requests'} in flight (every other target idle).`),
        row.tie_at === null ? null : h('p', { class: 'muted' }, `At ${row.tie_at} in flight the owner and the best other target tie: each request is a coin flip between them.`));
    } catch (err) {
      if (mine !== asked) return;
      showError(form, err);
    }
  }

  const status = h('div', { class: 'success', role: 'status', hidden: true });
  const form = h('form', { class: 'form', novalidate: true, id: 'policy-form' },
    formErrorSlot(),
    route ? h('h2', {}, route.name, badge('policy'), route.read_only ? badge('from rolter.toml') : null) : null,
    h('table', { class: 'grid plugins' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Plugin'), h('th', {}, 'Weight'), h('th', {}, ''))),
      h('tbody', {}, rows)),
    h('div', { class: 'field' }, h('label', { for: 'policy-targets' }, route ? 'Targets (candidate instances of this route)' : 'Targets'), targets, errorSlot('targets')),
    h('div', {}, h('h3', {}, 'Session flip threshold'),
      h('p', { class: 'muted' }, 'The number of requests in flight on a session’s owner at which the session moves to another target; “never” when it stays.'),
      result, errorSlot('ratios')),
    status,
    editable ? h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Save weights')) : null);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!editable) return;
    clearErrors(form);
    status.hidden = true;
    // The route as fetched, with only the touched plugin keys changed.
    const body = structuredClone(route);
    delete body.read_only;
    body.policy = structuredClone(route.policy ?? {});
    for (const p of PLUGINS) {
      const c = controls[p.key];
      if (!c) continue;
      if (touched.has(`${p.key}.on`) && !c.on.checked) { delete body.policy[p.key]; continue; }
      if (touched.has(`${p.key}.on`) && c.on.checked && !body.policy[p.key]) body.policy[p.key] = {};
      if (touched.has(`${p.key}.weight`) && body.policy[p.key]) {
        const raw = c.weight.value.trim();
        const n = Number(raw);
        body.policy[p.key].weight = raw !== '' && Number.isFinite(n) ? n : raw;
      }
    }
    if (Object.keys(body.policy).length === 0 && route.policy === undefined) delete body.policy;
    try {
      route = await api.put(`/routes/${seg(route.name)}`, body);
      touched.clear();
      status.textContent = 'Saved.';
      status.hidden = false;
    } catch (err) {
      showError(form, err);
    }
  });
  ask();
  return section(null, form);
}
