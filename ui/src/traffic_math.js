// Turns the cumulative counters every node reports (stats in /api/v1/cluster/nodes, every 5 s)
// into rates over the last interval, summed over nodes: requests per second, the 5xx share,
// windowed TTFT and latency percentiles from histogram bucket differences, and each target's
// share of picks.

const CLASSES = ['2xx', '4xx', '5xx', 'other'];

// Keeps each node's two latest distinct reports (keyed by stats.at_ms).
export class ReportWindow {
  constructor() { this.nodes = new Map(); }

  add(nodes) {
    const seen = new Set();
    for (const node of nodes) {
      const stats = node.stats;
      seen.add(node.node_id);
      if (!stats || typeof stats.at_ms !== 'number' || node.health === 'down') continue;
      const w = this.nodes.get(node.node_id) ?? { prev: null, cur: null };
      if (w.cur && w.cur.at_ms === stats.at_ms) continue;
      if (w.cur && stats.at_ms < w.cur.at_ms) continue;
      w.prev = w.cur;
      w.cur = stats;
      this.nodes.set(node.node_id, w);
    }
    for (const id of [...this.nodes.keys()]) if (!seen.has(id)) this.nodes.delete(id);
  }

  // The route names any node reports.
  routes() {
    const out = new Set();
    for (const w of this.nodes.values()) for (const r of w.cur?.routes ?? []) out.add(r.route);
    return out;
  }

  // The route names whose counters are above zero on some node.
  activeRoutes() {
    const out = new Set();
    for (const w of this.nodes.values()) {
      for (const r of w.cur?.routes ?? []) if (requestsOf(r) > 0) out.add(r.route);
    }
    return out;
  }

  // Each node's last interval for route `name`: its length in seconds, the route's latest report,
  // and the report its counters grew from (null when they count from zero: the node restarted, or
  // the route is new to it). A node's reports say when its counters started (older nodes do not:
  // then smaller counters mean a restart). A reload that removed one of the route's targets also
  // lowers its totals, by what that target had counted, with no restart: an interval's growth is
  // what it can see, never less than nothing.
  *intervals(name) {
    for (const w of this.nodes.values()) {
      if (!w.prev || !w.cur) continue;
      const seconds = (w.cur.at_ms - w.prev.at_ms) / 1000;
      if (!(seconds > 0)) continue;
      const cur = w.cur.routes?.find((r) => r.route === name);
      if (!cur) continue;
      const prev = w.prev.routes?.find((r) => r.route === name) ?? null;
      const restarted = prev && (w.cur.started_at_ms !== undefined && w.prev.started_at_ms !== undefined
        ? w.cur.started_at_ms !== w.prev.started_at_ms
        : requestsOf(prev) > requestsOf(cur));
      yield { seconds, cur, base: restarted ? null : prev };
    }
  }

  // Each node's latest report of route `name`.
  *latest(name) {
    for (const w of this.nodes.values()) {
      const cur = w.cur?.routes?.find((r) => r.route === name);
      if (cur) yield cur;
    }
  }

  // The last interval's figures for `route`, summed over nodes.
  route(name) {
    let rps = 0;
    let total = 0;
    let errors = 0;
    const duration = new Merged();
    const ttft = new Merged();
    const picks = new Map();
    const targetLatency = new Map();  // target → Merged durations
    for (const { seconds, cur, base } of this.intervals(name)) {
      const count = Math.max(0, requestsOf(cur) - (base ? requestsOf(base) : 0));
      rps += count / seconds;
      total += count;
      errors += Math.max(0, Number(cur.requests?.['5xx'] ?? 0) - Number(base?.requests?.['5xx'] ?? 0));
      duration.add(cur.duration_ms, base?.duration_ms);
      ttft.add(cur.ttft_ms, base?.ttft_ms);
      for (const t of cur.targets ?? []) {
        const before = base?.targets?.find((x) => x.target === t.target)?.picks ?? 0;
        picks.set(t.target, (picks.get(t.target) ?? 0) + Math.max(0, Number(t.picks ?? 0) - Number(before)));
        if (t.duration_ms) {
          if (!targetLatency.has(t.target)) targetLatency.set(t.target, new Merged());
          targetLatency.get(t.target).add(t.duration_ms, base?.targets?.find((x) => x.target === t.target)?.duration_ms);
        }
      }
    }
    const pickSum = [...picks.values()].reduce((a, b) => a + b, 0);
    const share = pickSum > 0 ? new Map([...picks.entries()].map(([k, v]) => [k, v / pickSum])) : new Map();
    return {
      rps,
      errorRate: total > 0 ? Math.max(0, errors) / total : 0,
      ttft: { p50: ttft.quantile(0.5), p99: ttft.quantile(0.99) },
      latency: { p50: duration.quantile(0.5), p99: duration.quantile(0.99) },
      share,
      // Each target's latency p50 over the interval (null without answers).
      targetLatencyP50: new Map([...targetLatency.entries()].map(([k, m]) => [k, m.quantile(0.5)])),
    };
  }
}

function requestsOf(route) {
  return CLASSES.reduce((sum, k) => sum + Number(route.requests?.[k] ?? 0), 0);
}

// Histogram differences summed over nodes (buckets matched by their bound).
class Merged {
  constructor() {
    this.buckets = new Map();  // bound (Infinity for +Inf) → cumulative count in the window
    this.fallback = null;      // without buckets: the highest cumulative percentile seen
  }

  add(cur, prev) {
    if (!cur) return;
    if (Array.isArray(cur.buckets) && cur.buckets.length) {
      const before = new Map((prev?.buckets ?? []).map((b) => [b.le ?? Infinity, Number(b.count)]));
      for (const b of cur.buckets) {
        const le = b.le ?? Infinity;
        const delta = Math.max(0, Number(b.count) - (before.get(le) ?? 0));
        this.buckets.set(le, (this.buckets.get(le) ?? 0) + delta);
      }
      return;
    }
    if (Number(cur.count ?? 0) > Number(prev?.count ?? 0)) {
      this.fallback = this.fallback ?? {};
      for (const q of ['p50', 'p99']) {
        if (typeof cur[q] === 'number') this.fallback[q] = Math.max(this.fallback[q] ?? 0, cur[q]);
      }
    }
  }

  // The value below which a fraction q of the window's samples fall, interpolated within its
  // bucket; null without samples.
  quantile(q) {
    if (this.buckets.size) {
      const bounds = [...this.buckets.keys()].sort((a, b) => a - b);
      const counts = bounds.map((b) => this.buckets.get(b));
      const total = counts[counts.length - 1];
      if (!(total > 0)) return null;
      const rank = q * total;
      let lower = 0;
      let below = 0;
      for (let i = 0; i < bounds.length; i++) {
        if (counts[i] >= rank && counts[i] > below) {
          if (bounds[i] === Infinity) return lower;
          const inBucket = counts[i] - below;
          return lower + (bounds[i] - lower) * ((rank - below) / inBucket);
        }
        if (bounds[i] !== Infinity) lower = bounds[i];
        below = counts[i];
      }
      return lower;
    }
    if (!this.fallback) return null;
    return this.fallback[q === 0.5 ? 'p50' : 'p99'] ?? null;
  }
}
