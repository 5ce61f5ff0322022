// Usage: spend and tokens over time per key, team or model (from /api/v1/usage, kept per hour by
// the store), the totals of the range, the remaining budget of every key and team that sets one,
// and the keys and teams near their budget.
import { api, list } from '../api.js';
import { h, clear, table, badge, emptyState, section, int, num, percent } from '../dom.js';
import { barChart } from '../bar_chart.js';
import { periodStart, budgetOf, budgetState, NEAR_LIMIT, buckets, seriesOf, tokensOf, spendOf } from '../usage_math.js';

const HOUR_MS = 3600000;
const DAY_MS = 24 * HOUR_MS;
// The ranges offered: the last 48 hours by hour, the last 14 or 30 days by day.
const RANGES = {
  '48h': { label: 'Last 48 hours, per hour', step: HOUR_MS, count: 48, group: 'hour' },
  '14d': { label: 'Last 14 days, per day', step: DAY_MS, count: 14, group: 'day' },
  '30d': { label: 'Last 30 days, per day', step: DAY_MS, count: 30, group: 'day' },
};
const BY = { key: 'Key', team: 'Team', model: 'Model' };

const usd = (v) => `$${num(v, v !== 0 && Math.abs(v) < 0.01 ? 6 : 2)}`;
const query = (params) => `/usage?${new URLSearchParams(params)}`;

function bucketLabel(step) {
  return (t) => {
    const iso = new Date(t).toISOString();
    return step === HOUR_MS ? `${iso.slice(5, 10)} ${iso.slice(11, 13)}h` : iso.slice(5, 10);
  };
}

// The teams' JSON when this control plane serves /teams; [] when it has none.
async function teamsIfAny() {
  try {
    return await list('/teams');
  } catch (err) {
    if (err.status === 404) return [];
    throw err;
  }
}

// Budget rows for the keys and teams that set one: the spend since each period's start.
async function budgetRows(keys, teams, now) {
  const owners = [
    ...keys.map((k) => ({ kind: 'key', name: k.name, budget: budgetOf(k) })),
    ...teams.map((t) => ({ kind: 'team', name: t.name, budget: budgetOf(t) })),
  ].filter((o) => o.budget);
  const spend = new Map();  // "kind|period" → Map(name → usd)
  for (const o of owners) {
    const id = `${o.kind}|${o.budget.period}`;
    if (spend.has(id)) continue;
    const answer = await api.get(query({ from: String(periodStart(o.budget.period, now)), group_by: o.kind }));
    spend.set(id, new Map((answer?.data ?? []).map((r) => [r[o.kind], r.usd])));
  }
  return owners.map((o) => ({
    ...o, ...budgetState(o.budget, spend.get(`${o.kind}|${o.budget.period}`).get(o.name) ?? 0),
  }));
}

function budgetTable(rows) {
  const body = rows.map((r) => h('tr', { dataset: { budget: `${r.kind}/${r.name}`, remaining: String(r.remaining), share: String(r.share) } },
    h('td', {}, badge(r.kind), ' ', r.name),
    h('td', {}, r.budget.period),
    h('td', { class: 'num' }, usd(r.budget.usd)),
    h('td', { class: 'num' }, usd(r.spent)),
    h('td', { class: 'num', dataset: { cell: 'remaining' } }, usd(Math.max(0, r.remaining))),
    h('td', { class: 'num' }, r.share >= 1 ? badge(percent(r.share, 0), 'bad') : r.share >= NEAR_LIMIT ? badge(percent(r.share, 0), 'warn') : percent(r.share, 0))));
  return table([{ label: 'Who' }, { label: 'Period' }, { label: 'Budget', num: true }, { label: 'Spent', num: true },
    { label: 'Remaining', num: true }, { label: 'Used', num: true }], body);
}

function totalsTable(rows, by) {
  const body = rows.map((r) => h('tr', { dataset: { group: r[by] } },
    h('td', {}, r[by] === '' ? h('span', { class: 'muted' }, '(none)') : r[by]),
    h('td', { class: 'num', dataset: { cell: 'requests' } }, int(r.requests)),
    h('td', { class: 'num', dataset: { cell: 'input' } }, int(r.input_tokens)),
    h('td', { class: 'num' }, int(r.cached_input_tokens)),
    h('td', { class: 'num', dataset: { cell: 'output' } }, int(r.output_tokens)),
    h('td', { class: 'num', dataset: { cell: 'usd' } }, usd(r.usd)),
    h('td', { class: 'num' }, r.estimated ? badge(int(r.estimated), 'warn') : '0')));
  return table([{ label: BY[by] }, { label: 'Requests', num: true }, { label: 'Input tokens', num: true },
    { label: 'Cached', num: true }, { label: 'Output tokens', num: true }, { label: 'Spend', num: true },
    { label: 'Estimated', num: true }], body, { empty: 'No usage in this range.' });
}

export default {
  async render(root, ctx) {
    let range = RANGES[ctx.params.get('range')] ? ctx.params.get('range') : '14d';
    let by = BY[ctx.params.get('by')] ? ctx.params.get('by') : 'key';
    const rangePick = h('select', { id: 'usage-range' }, Object.entries(RANGES).map(([v, r]) =>
      h('option', { value: v, selected: v === range }, r.label)));
    const byPick = h('select', { id: 'usage-by' }, Object.entries(BY).map(([v, label]) =>
      h('option', { value: v, selected: v === by }, `per ${label.toLowerCase()}`)));
    const summary = h('div', { class: 'toolbar usage-summary' });
    const charts = h('div', { class: 'grid-2' });
    const totals = h('div');
    const budgets = h('div');
    const near = h('div');
    clear(root,
      section(null, h('div', { class: 'toolbar' }, h('label', { for: 'usage-range' }, 'Range'), rangePick,
        h('label', { for: 'usage-by' }, 'Split'), byPick, h('span', { class: 'spacer' }), summary), charts),
      section('Totals in the range', totals),
      section('Budgets', budgets),
      section('Near their budget', near));

    async function load() {
      const r = RANGES[range];
      const now = Date.now();
      const to = Math.floor(now / r.step) * r.step + r.step;
      const from = to - r.count * r.step;
      const [series, grouped, keys, teams] = await Promise.all([
        api.get(query({ from: String(from), to: String(to), group_by: `${r.group},${by}` })),
        api.get(query({ from: String(from), to: String(to), group_by: by })),
        list('/keys'),
        teamsIfAny(),
      ]);
      const owners = await budgetRows(keys, teams, now);
      if (!ctx.alive()) return;
      const starts = buckets(from, to, r.step);
      const label = bucketLabel(r.step);
      const spend = seriesOf(series.data ?? [], by, spendOf);
      const tokens = seriesOf(series.data ?? [], by, tokensOf);
      clear(charts,
        barChart({ title: `Spend per ${by}`, key: 'spend', starts, series: spend.series, label, format: usd,
          value: (s, t) => spend.values.get(s)?.get(t) }),
        barChart({ title: `Tokens per ${by}`, key: 'tokens', starts, series: tokens.series, label, format: int,
          value: (s, t) => tokens.values.get(s)?.get(t) }));
      const t = grouped.totals ?? {};
      clear(summary,
        h('span', { dataset: { total: 'usd' } }, `Spend ${usd(t.usd ?? 0)}`),
        h('span', { dataset: { total: 'requests' } }, `${int(t.requests ?? 0)} requests`),
        h('span', { dataset: { total: 'tokens' } }, `${int((t.input_tokens ?? 0) + (t.output_tokens ?? 0))} tokens`));
      clear(totals, totalsTable(grouped.data ?? [], by));
      clear(budgets, owners.length ? budgetTable(owners)
        : emptyState('No key or team sets a budget.', 'A budget is { usd, period } on a key or team.'));
      const close = owners.filter((o) => o.share >= NEAR_LIMIT).sort((a, b) => b.share - a.share);
      clear(near, close.length ? budgetTable(close)
        : emptyState(`No key or team has spent ${percent(NEAR_LIMIT, 0)} of its budget.`));
      root.dataset.usageLoaded = String(now);
    }

    const reload = () => load().catch((err) => ctx.banner(err.message));
    rangePick.addEventListener('change', () => { range = rangePick.value; reload(); });
    byPick.addEventListener('change', () => { by = byPick.value; reload(); });
    await load();
  },
};
