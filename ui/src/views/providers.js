// Providers: every provider with its instances and the live state the nodes report for each
// (health, breaker, parked, in flight, KV-event stream, LMCache occupancy), refreshed every few
// seconds; admins also create, edit (the whole entity as JSON) and delete providers.
import { api, list, seg } from '../api.js';
import { h, clear, badge, emptyState, section, int, percent, num } from '../dom.js';
import { instanceUrls, mergeInstances } from '../instances.js';
import { clearErrors, errorSlot, formErrorSlot, showError } from '../form_errors.js';
import { carriesTelemetry } from '../strategy_picker.js';

const REFRESH_MS = 3000;

function healthBadge(m) {
  if (!m) return badge('no report', '');
  if (m.healthKnown === 0) return badge('unknown', '');
  if (m.healthy === m.healthKnown) return badge(m.healthKnown > 1 ? `healthy on ${m.healthKnown} nodes` : 'healthy', 'ok');
  if (m.healthy === 0) return badge(m.healthKnown > 1 ? `unhealthy on ${m.healthKnown} nodes` : 'unhealthy', 'bad');
  return badge(`healthy on ${m.healthy} of ${m.healthKnown}`, 'warn');
}

function breakerBadge(m) {
  if (!m) return '—';
  const kind = m.breaker === 'open' ? 'bad' : m.breaker === 'half_open' ? 'warn' : 'ok';
  const text = m.breaker.replace('_', '-');
  return badge(m.breakerOpenOn && m.nodes > 1 ? `${text} (${m.breakerOpenOn} of ${m.nodes})` : text, kind);
}

function kvBadge(configured, m) {
  if (!configured) return h('span', { class: 'muted' }, 'not configured');
  const state = m?.kv_events;
  if (!state) return h('span', { class: 'muted' }, '—');
  return badge(state, state === 'live' ? 'ok' : state === 'stale' ? 'warn' : 'bad');
}

function providerCard(provider, merged, ctx, reload) {
  const urls = instanceUrls(provider);
  const instances = Array.isArray(provider.instances) && provider.instances.length ? provider.instances : [provider];
  const rows = urls.map((url, i) => {
    const m = merged.get(`${provider.name}@${url}`);
    const inst = instances[i] ?? {};
    const kvConfigured = Boolean(inst.kv_events || provider.kv_events);
    const lmConfigured = Boolean(inst.lmcache || provider.lmcache);
    const hosted = !carriesTelemetry(provider.kind);
    const notApplicable = () => h('span', { class: 'muted', title: 'not a self-hosted engine' }, 'n/a (hosted)');
    return h('tr', { dataset: { instance: `${provider.name}@${url}` } },
      h('td', { class: 'mono' }, url),
      h('td', {}, healthBadge(m)),
      h('td', {}, breakerBadge(m)),
      h('td', {}, m ? (m.parked ? badge(`parked on ${m.parked}`, 'warn') : 'no') : '—'),
      h('td', { class: 'num', dataset: { inFlight: m ? String(m.in_flight) : '' } }, m ? int(m.in_flight) : '—'),
      h('td', {}, hosted ? notApplicable() : kvBadge(kvConfigured, m)),
      h('td', { class: 'num' }, hosted ? notApplicable()
        : lmConfigured ? percent(m?.lmcache_occupancy ?? null) : h('span', { class: 'muted' }, 'not configured')),
      h('td', { class: 'num' }, m?.engine_load === null || m?.engine_load === undefined ? '—' : num(m.engine_load, 1)));
  });
  const actions = ctx.canWrite && !provider.read_only
    ? h('span', { class: 'toolbar' },
        h('a', { href: `#/providers?edit=${encodeURIComponent(provider.name)}`, class: 'button-link', dataset: { write: '' } }, 'Edit'))
    : null;
  return section(null,
    h('h2', {}, provider.name, badge(provider.kind ?? 'openai'), provider.read_only ? badge('from rolter.toml') : null,
      provider.cost ? h('span', { class: 'muted' }, `price in ${num(provider.cost.input, 4)} / out ${num(provider.cost.output, 4)} per M tokens`) : null,
      h('span', { class: 'spacer' }), actions),
    h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, ['Instance', 'Health', 'Breaker', 'Parked', 'In flight', 'KV events', 'LMCache', 'Engine load']
        .map((l, i) => h('th', { class: [4, 6, 7].includes(i) ? 'num' : null }, l)))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: '8', class: 'empty' }, 'No instances.')))));
}

function createForm(ctx, onCreated) {
  const name = h('input', { id: 'provider-name', dataset: { field: 'name', write: '' }, spellcheck: 'false', autocomplete: 'off', placeholder: 'qwen-a' });
  const kind = h('select', { id: 'provider-kind', dataset: { field: 'kind', write: '' } },
    ['openai', 'anthropic', 'decision_service'].map((k) => h('option', { value: k }, k)));
  const url = h('input', { id: 'provider-url', dataset: { field: 'base_url', write: '' }, spellcheck: 'false', autocomplete: 'off', placeholder: 'http://10.0.0.5:8000' });
  const submit = h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Create provider');
  const form = h('form', { class: 'form', novalidate: true },
    formErrorSlot(),
    h('div', { class: 'fields-row' },
      h('div', { class: 'field' }, h('label', { for: 'provider-name' }, 'Name'), name, errorSlot('name')),
      h('div', { class: 'field' }, h('label', { for: 'provider-kind' }, 'Kind'), kind, errorSlot('kind')),
      h('div', { class: 'field' }, h('label', { for: 'provider-url' }, 'Base URL'), url, errorSlot('base_url'))),
    h('p', { class: 'muted' }, 'Instances, telemetry sources, costs and the other keys can be added by editing the provider once created.'),
    h('div', { class: 'toolbar' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = { name: name.value.trim(), base_url: url.value.trim() };
    if (kind.value !== 'openai') body.kind = kind.value;
    try {
      await api.post('/providers', body);
      name.value = '';
      url.value = '';
      onCreated();
    } catch (err) {
      showError(form, err);
    }
  });
  return section('New provider', form);
}

async function editScreen(root, ctx, name) {
  const provider = await api.get(`/providers/${seg(name)}`);
  if (!ctx.alive()) return;
  const back = h('a', { href: '#/providers' }, '← All providers');
  if (provider.read_only || !ctx.canWrite) {
    clear(root, section(provider.name, h('pre', {}, JSON.stringify(provider, null, 2))), back);
    return;
  }
  delete provider.read_only;
  const text = h('textarea', { id: 'provider-json', dataset: { field: 'json', write: '' }, spellcheck: 'false' });
  text.value = JSON.stringify(provider, null, 2);
  const status = h('div', { class: 'success', hidden: true });
  const save = h('button', { type: 'submit', class: 'primary', dataset: { write: '' } }, 'Save');
  let armed = false;
  const del = h('button', { type: 'button', class: 'danger', dataset: { write: '' } }, 'Delete provider');
  const form = h('form', { class: 'form', novalidate: true },
    formErrorSlot(),
    h('p', { class: 'muted' }, 'The provider as stored, key for key as in rolter.toml. Saving replaces it whole.'),
    text, errorSlot('json'), status,
    h('div', { class: 'toolbar' }, save, h('span', { class: 'spacer' }), del));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    status.hidden = true;
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (err) {
      showError(form, { param: 'json', message: `not valid JSON: ${err.message}` });
      return;
    }
    try {
      await api.put(`/providers/${seg(name)}`, body);
      status.textContent = 'Saved.';
      status.hidden = false;
    } catch (err) {
      showError(form, err);
    }
  });
  del.addEventListener('click', async () => {
    if (!armed) { armed = true; del.textContent = `Confirm: delete ${name}`; return; }
    try {
      await api.del(`/providers/${seg(name)}`);
      ctx.navigate('#/providers');
    } catch (err) {
      showError(form, err);
    }
  });
  clear(root, section(`Provider ${name}`, form), back);
}

export default {
  async render(root, ctx) {
    const editing = ctx.params.get('edit');
    if (editing !== null) return editScreen(root, ctx, editing);
    const live = h('div', { class: 'provider-list' });
    clear(root,
      h('p', { class: 'muted' }, `Live state merged over every gateway node, refreshed every ${REFRESH_MS / 1000} s.`),
      live,
      ctx.canWrite ? createForm(ctx, () => refresh()) : null);
    const refresh = async () => {
      const [providers, nodes] = await Promise.all([list('/providers'), list('/cluster/nodes')]);
      if (!ctx.alive()) return;
      const merged = mergeInstances(nodes);
      clear(live, providers.length
        ? providers.map((p) => providerCard(p, merged, ctx))
        : emptyState('No providers yet.', ctx.canWrite ? 'Create one below.' : ''));
    };
    await ctx.every(REFRESH_MS, refresh);
  },
};
