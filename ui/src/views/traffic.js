// Live traffic: per route, charts of requests per second, the 5xx share, TTFT and latency p50 and
// p99, each target's share of picks, the requests waiting in the gateway's queue and those it shed
// per second, summed over every gateway node from the counters they report
// (/api/v1/cluster/nodes), polled every 2.5 s.
import { api, list } from '../api.js';
import { h, clear, emptyState, section, num, table } from '../dom.js';
import { ReportWindow } from '../traffic_math.js';
import { routeQueue } from '../queue_math.js';
import { timeChart } from '../chart.js';

const POLL_MS = 2500;
const ms = (v) => (v === null || v === undefined ? '—' : `${num(v, v < 10 ? 1 : 0)} ms`);
const pct = (v) => (v === null || v === undefined ? '—' : `${num(v * 100, 1)} %`);
// A rate per second: two decimals below 1, one above.
const perSecond = (v) => num(v, v > 0 && v < 1 ? 2 : 1);

// The shed chart's series: each reason's rate, or a placeholder while no node reports a queue.
function shedSeries(shed) {
  if (!shed) return { 'no queue': null };
  return Object.fromEntries(Object.entries(shed.byReason).sort(([a], [b]) => a.localeCompare(b)));
}

function routePanel(name) {
  const charts = {
    rps: timeChart({ title: 'Requests / s', format: (v) => num(v, 1), seriesKeys: ['lastRps'] }),
    errors: timeChart({ title: 'Error rate (5xx share)', format: pct, seriesKeys: ['lastErrorRate'] }),
    share: timeChart({ title: 'Share by target', format: pct }),
    ttft: timeChart({ title: 'Time to first token', format: ms, seriesKeys: ['lastTtftP50', 'lastTtftP99'] }),
    latency: timeChart({ title: 'Latency', format: ms, seriesKeys: ['lastLatencyP50', 'lastLatencyP99'] }),
    targetLatency: timeChart({ title: 'Latency p50 by target', format: ms }),
    queue: timeChart({ title: 'Queued (waiting in the gateway)', format: (v) => num(v, 0), seriesKeys: ['lastQueueDepth'] }),
    shed: timeChart({ title: 'Shed / s (429 by reason)', format: perSecond }),
  };
  const element = section(null, h('h2', {}, name),
    h('div', { class: 'charts' }, Object.values(charts).map((c) => c.element)));
  element.dataset.route = name;
  for (const [key, c] of Object.entries(charts)) c.element.dataset.chart = key;
  return {
    element,
    push(t, f) {
      charts.rps.push(t, { 'req/s': f.rps });
      charts.errors.push(t, { '5xx': f.errorRate });
      charts.ttft.push(t, { p50: f.ttft.p50, p99: f.ttft.p99 });
      charts.latency.push(t, { p50: f.latency.p50, p99: f.latency.p99 });
      const share = Object.fromEntries([...f.share.entries()].sort(([a], [b]) => a.localeCompare(b)));
      charts.share.push(t, Object.keys(share).length ? share : { 'no picks': null });
      charts.share.setData('lastShare', JSON.stringify(share));
      const perTarget = Object.fromEntries([...f.targetLatencyP50.entries()].sort(([a], [b]) => a.localeCompare(b)));
      charts.targetLatency.push(t, Object.keys(perTarget).length ? perTarget : { 'no answers': null });
      charts.targetLatency.setData('lastTargetLatencyP50', JSON.stringify(perTarget));
      charts.queue.push(t, { queued: f.queue.depth });
      charts.shed.push(t, shedSeries(f.queue.shed));
      charts.shed.setData('lastShedRate', f.queue.shed ? String(f.queue.shed.total) : '');
    },
    destroy() { for (const c of Object.values(charts)) c.destroy(); },
  };
}

export default {
  async render(root, ctx) {
    const configured = (await list('/routes')).map((r) => r.name);
    if (!ctx.alive()) return;
    const reports = new ReportWindow();
    const panels = new Map();
    const box = h('div', { class: 'traffic' });
    const status = h('p', { class: 'muted' });
    const summary = h('div');
    clear(root, status, summary, box);
    ctx.onCleanup(() => { for (const p of panels.values()) p.destroy(); });
    await ctx.every(POLL_MS, async () => {
      const answer = await api.get('/cluster/nodes');
      if (!ctx.alive()) return;
      const nodes = answer?.data ?? [];
      reports.add(nodes);
      const reporting = nodes.filter((n) => n.stats && n.health !== 'down').length;
      status.textContent = `Summed over ${reporting} reporting node${reporting === 1 ? '' : 's'}; nodes report every 5 s, this page polls every ${POLL_MS / 1000} s.`;
      // Configured routes always; other addresses (provider groups, pinned providers) once they serve.
      const names = [...new Set([...configured, ...reports.activeRoutes()])].sort();
      if (names.length === 0) {
        clear(box, emptyState('No routes yet.', 'Traffic appears here once a route serves requests.'));
        return;
      }
      if (panels.size === 0) clear(box);
      const t = Date.now() / 1000;
      const now = new Map(names.map((name) => [name, { ...reports.route(name), queue: routeQueue(reports, name) }]));
      clear(summary, section(null, h('div', { class: 'traffic-summary' }, table(
        [{ label: 'Route' }, { label: 'Requests / s', num: true }, { label: '5xx', num: true },
          { label: 'TTFT p50', num: true }, { label: 'Latency p50', num: true }, { label: 'Latency p99', num: true },
          { label: 'Queued', num: true }, { label: 'Shed / s', num: true }, { label: 'Targets' }],
        names.map((name) => {
          const f = now.get(name);
          return [h('a', { href: '#/traffic', dataset: { jump: name } }, name), num(f.rps, 1), pct(f.errorRate),
            ms(f.ttft.p50), ms(f.latency.p50), ms(f.latency.p99), num(f.queue.depth, 0),
            perSecond(f.queue.shed?.total),
            [...f.share.entries()].map(([target, share]) => `${target} ${pct(share)}`).join(' · ') || '—'];
        })))));
      for (const a of summary.querySelectorAll('a[data-jump]')) {
        a.addEventListener('click', (event) => {
          event.preventDefault();
          panels.get(a.dataset.jump)?.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
        });
      }
      for (const name of names) {
        let panel = panels.get(name);
        if (!panel) {
          panel = routePanel(name);
          panels.set(name, panel);
          box.append(panel.element);
        }
        panel.push(t, now.get(name));
      }
    });
  },
};
