// The strategy picker of the route and provider-group editors: offers the strategies that may be
// set per route (from /api/v1/strategies), always shows the value the entity already holds (even
// one it would not offer), says what the chosen strategy does, whether it reads weights, and
// whether the targets' providers carry the telemetry it needs.
import { h, clear } from './dom.js';
import { errorSlot } from './form_errors.js';

const TELEMETRY = {
  kv_events: { key: 'kv_events', what: 'a KV-event stream (kv_events)' },
  lmcache: { key: 'lmcache', what: 'an LMCache occupancy endpoint (lmcache)' },
};
// Provider kinds that are not self-hosted engines: they carry neither telemetry source.
const NO_TELEMETRY_KINDS = new Set(['anthropic', 'decision_service']);

// Whether a provider of this kind can carry a KV-event stream or an LMCache endpoint.
export const carriesTelemetry = (kind) => !NO_TELEMETRY_KINDS.has(kind ?? 'openai');

// What a provider offers for `source` ('kv_events' | 'lmcache'):
// { state: 'cannot' | 'none' | 'partial' | 'ok', missing, total }.
export function telemetryOf(provider, source) {
  const kind = provider.kind ?? 'openai';
  if (NO_TELEMETRY_KINDS.has(kind)) return { state: 'cannot', kind };
  const instances = Array.isArray(provider.instances) && provider.instances.length
    ? provider.instances : [provider];
  const has = (inst) => Boolean(inst?.[source]) || Boolean(provider[source]);
  const missing = instances.filter((i) => !has(i)).length;
  if (missing === 0) return { state: 'ok', missing, total: instances.length };
  if (missing === instances.length) return { state: 'none', missing, total: instances.length };
  return { state: 'partial', missing, total: instances.length };
}

// One line per target provider that lacks the telemetry `source` needs.
export function telemetryProblems(source, providerNames, providersByName) {
  const spec = TELEMETRY[source];
  const problems = [];
  for (const name of [...new Set(providerNames.filter(Boolean))]) {
    const provider = providersByName.get(name);
    if (!provider) continue;
    const t = telemetryOf(provider, source);
    if (t.state === 'cannot') {
      problems.push({ provider: name, state: 'cannot',
        text: `${name} (kind ${t.kind}) cannot carry ${spec.what}: it is not a self-hosted engine.` });
    } else if (t.state === 'none') {
      problems.push({ provider: name, state: 'none', text: `${name} has no ${spec.key} configured.` });
    } else if (t.state === 'partial') {
      problems.push({ provider: name, state: 'partial',
        text: `${name}: ${t.missing} of ${t.total} instances have no ${spec.key} configured.` });
    }
  }
  return problems;
}

// strategies: /api/v1/strategies' data. current: the entity's strategy (undefined when unset,
// i.e. the default). targetProviders(): the provider names the targets use now.
// The strategy a route that names none gets, as /api/v1/strategies marks it.
export function defaultStrategy(strategies) {
  return strategies.find((s) => s.default)?.name ?? '';
}

export function strategyPicker({ strategies, current, defaultName = defaultStrategy(strategies), providersByName, targetProviders, disabled = false, onChange }) {
  const byName = new Map(strategies.map((s) => [s.name, s]));
  const offered = strategies.filter((s) => s.per_route);
  const select = h('select', { id: 'strategy', dataset: { field: 'strategy' }, disabled });
  if (!disabled) select.dataset.write = '';
  if (current === undefined) {
    select.append(h('option', { value: '' }, `${defaultName} (default)`));
  } else if (!offered.some((s) => s.name === current)) {
    select.append(h('option', { value: current, dataset: { current: '' } }, `${current} (current)`));
  }
  for (const s of offered) {
    const needs = s.telemetry ? ` — needs ${s.telemetry}` : '';
    select.append(h('option', { value: s.name }, `${s.name}${needs}`));
  }
  select.value = current ?? '';
  let touched = false;

  const help = h('div', { class: 'strategy-help' });
  const effective = () => select.value || defaultName;

  function refresh() {
    const s = byName.get(effective());
    const parts = [];
    if (s?.summary) parts.push(h('p', { class: 'muted strategy-summary' }, s.summary));
    if (s && !s.per_route) {
      parts.push(h('p', { class: 'hint' }, `${s.name} is set deployment-wide on the Adaptive routing screen; it is not offered for new choices here.`));
    }
    if (s && !s.reads_weights) {
      parts.push(h('p', { class: 'note', dataset: { weightsNote: '' } }, `weights are ignored by ${s.name}`));
    }
    if (s?.telemetry && TELEMETRY[s.telemetry]) {
      const spec = TELEMETRY[s.telemetry];
      const problems = telemetryProblems(s.telemetry, targetProviders(), providersByName);
      parts.push(h('div', { class: `hint telemetry-hint${problems.length ? ' warn' : ''}`, dataset: { telemetry: s.telemetry } },
        h('span', {}, `${s.name} needs ${spec.what} on every target's provider; without one an instance scores neutral.`),
        problems.length ? h('ul', {}, problems.map((p) => h('li', { dataset: { provider: p.provider, state: p.state } }, p.text))) : null));
    }
    clear(help, parts);
  }

  select.addEventListener('change', () => {
    touched = true;
    refresh();
    onChange?.(effective());
  });
  refresh();

  const element = h('div', { class: 'field strategy-field' },
    h('label', { for: 'strategy' }, 'Strategy'), select, errorSlot('strategy'), help);
  return {
    element,
    refresh,
    touched: () => touched,
    // The value to send: exactly the fetched one unless the operator changed it.
    value: () => (touched ? select.value || undefined : current),
    effective,
    reads: () => byName.get(effective())?.reads_weights ?? true,
  };
}
