// The Usage screen's arithmetic, free of the DOM: budget periods (UTC, SPEC §15), the remaining
// budget of a key or team, and time buckets for the charts.

const DAY_MS = 86400000;

// The start (unix ms) of the UTC day, week (from Monday) or month holding `now`.
export function periodStart(period, now = Date.now()) {
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return day;
  if (period === 'week') return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  if (period === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return null;
}

// A key's or team's budget ({ usd, period }) when it sets a valid one, else null.
export function budgetOf(entity) {
  const b = entity?.budget;
  if (!b || typeof b.usd !== 'number' || !(b.usd > 0)) return null;
  if (!['day', 'week', 'month'].includes(b.period)) return null;
  return { usd: b.usd, period: b.period };
}

// { spent, remaining, share } of a budget given the spend in its period; share = spent / usd.
export function budgetState(budget, spent) {
  return { spent, remaining: budget.usd - spent, share: spent / budget.usd };
}

// Shares at or above this are "near the limit" (and above 1, over it).
export const NEAR_LIMIT = 0.8;

// The buckets of [from, to) at `stepMs`, as unix ms starts.
export function buckets(from, to, stepMs) {
  const out = [];
  for (let t = from; t < to; t += stepMs) out.push(t);
  return out;
}

// Rows of /usage grouped by time and `field` → { series: [names by total desc], values:
// Map(name → Map(start_ms → value)) } for `metric` (a row → number).
export function seriesOf(rows, field, metric) {
  const values = new Map();
  const totals = new Map();
  for (const row of rows) {
    const name = row[field] === '' ? '(none)' : row[field];
    if (!values.has(name)) values.set(name, new Map());
    const v = metric(row);
    values.get(name).set(row.start_ms, (values.get(name).get(row.start_ms) ?? 0) + v);
    totals.set(name, (totals.get(name) ?? 0) + v);
  }
  const series = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a) || (a < b ? -1 : 1));
  return { series, values, totals };
}

export const tokensOf = (row) => row.input_tokens + row.output_tokens;
export const spendOf = (row) => row.usd;
