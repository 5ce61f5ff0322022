// Cluster: every gateway node with its health, software version, the snapshot version it serves
// against the control plane's, and when it was last heard from.
import { list, api } from '../api.js';
import { h, clear, table, badge, emptyState, section, ago, timestamp, int } from '../dom.js';

const REFRESH_MS = 3000;

export default {
  async render(root, ctx) {
    const body = h('div');
    clear(root, body);
    await ctx.every(REFRESH_MS, async () => {
      const answer = await api.get('/cluster/nodes');
      if (!ctx.alive()) return;
      const nodes = answer?.data ?? [];
      const current = answer?.snapshot_version;
      const rows = nodes.map((n) => {
        const behind = current - n.snapshot_version;
        const health = badge(n.health, n.health === 'healthy' ? 'ok' : n.health === 'stale' ? 'warn' : 'bad');
        const snapshot = behind === 0 ? badge('current', 'ok') : badge(behind > 0 ? `${int(behind)} behind` : 'ahead', 'warn');
        const requests = (n.stats?.routes ?? []).reduce((sum, r) =>
          sum + Object.values(r.requests ?? {}).reduce((a, b) => a + Number(b), 0), 0);
        return h('tr', { dataset: { node: n.node_id, health: n.health } },
          h('td', { class: 'mono' }, n.node_id),
          h('td', {}, health),
          h('td', {}, n.version || '—'),
          h('td', { class: 'num' }, int(n.snapshot_version)),
          h('td', {}, snapshot),
          h('td', { class: 'num' }, n.stats ? int(requests) : '—'),
          h('td', { title: timestamp(n.last_contact_ms) }, ago(n.seconds_since_contact)));
      });
      clear(body, section(null,
        h('div', { class: 'toolbar' },
          h('span', {}, 'Control plane snapshot version ', h('strong', { class: 'mono', dataset: { snapshotVersion: String(current) } }, int(current))),
          h('span', { class: 'spacer' }),
          h('span', { class: 'muted' }, `${nodes.length} node${nodes.length === 1 ? '' : 's'}`)),
        nodes.length
          ? table([{ label: 'Node' }, { label: 'Health' }, { label: 'Version' }, { label: 'Snapshot', num: true }, { label: '' },
            { label: 'Requests', num: true }, { label: 'Last contact' }], rows)
          : emptyState('No gateway node has contacted this control plane yet.',
            'Start one with rolter gateway --control-plane <this URL>.')));
    });
  },
};
