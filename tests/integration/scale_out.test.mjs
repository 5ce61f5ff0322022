// Scale-out (SPEC §10): one control plane on a real PostgreSQL 15 server and three `rolter
// gateway` nodes in front of a rolter-sim fleet. A route created through the API serves on every
// node within a second; the nodes report the same snapshot version; with the control plane
// stopped they keep serving, a node restarted meanwhile serves from its saved snapshot, and when
// the control plane returns they catch up. Then the adaptive policy is switched on through the
// API and the adaptive route changes behaviour on every node, whose telemetry reaches the
// control plane.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimFor } from '../lib/sim.mjs';
import { startControlPlane, startGateway, adminClient, tempDir } from '../lib/cluster.mjs';
import { startPostgres } from '../lib/postgres.mjs';
import { chat, waitUntil, fetchWithin } from '../lib/http.mjs';

const ADMIN = 'scale-admin-token-0123456789';
const NODE = 'scale-node-token-0123456789';
const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE };

const serves = async (gw, model) => (await chat(gw.url, model, { content: 'hi', maxTokens: 2, timeoutMs: 3000 })).status === 200;

// The picks of adaptive route `model` on one node, by decision (rolter_adaptive_routing_target_picks_total).
async function decisions(gw, model) {
  const text = await (await fetchWithin(`${gw.url}/metrics`)).text();
  const out = { blend: 0, exploration: 0, probe: 0, fallback: 0 };
  for (const line of text.split('\n')) {
    const m = line.match(/^rolter_adaptive_routing_target_picks_total\{(.*)\} (\S+)$/);
    if (!m || !m[1].includes(`route="${model}"`)) continue;
    const decision = m[1].match(/decision="(\w+)"/)[1];
    out[decision] += Number(m[2]);
  }
  return out;
}

test('three gateways follow one control plane on PostgreSQL, and outlive it', { timeout: 240000 }, async (t) => {
  const sim = await startSimFor(t, { engines: 2, args: ['--time-scale', '0'] });
  const pg = await startPostgres();
  t.after(() => pg.stop());
  let cp = await startControlPlane({ store: pg.url, env });
  t.after(() => cp.stop());
  const api = adminClient(cp.url, ADMIN);
  for (const [i, engine] of sim.engines.entries()) {
    const r = await api.post('/providers', { name: `engine-${i}`, base_url: engine.url });
    assert.equal(r.status, 201, r.text);
  }
  const dirs = [tempDir(), tempDir(), tempDir()];
  const gateways = [];
  for (const [i, stateDir] of dirs.entries()) {
    gateways[i] = await startGateway({ controlPlane: cp.url, nodeId: `node-${i}`, stateDir, env });
  }
  t.after(() => Promise.all(gateways.map((g) => g.stop())));
  await waitUntil(async () => (await api.get('/cluster/nodes')).body.data.length === 3,
    { timeoutMs: 10000, what: 'three nodes to register' });

  // A route created through the API serves on all three within a second.
  const created = await api.post('/routes', {
    name: 'shared', strategy: 'round_robin',
    targets: [{ provider: 'engine-0', model: 'sim-model' }, { provider: 'engine-1', model: 'sim-model' }],
  });
  assert.equal(created.status, 201, created.text);
  const start = Date.now();
  await Promise.all(gateways.map((gw) => waitUntil(() => serves(gw, 'shared'),
    { timeoutMs: 1000, intervalMs: 10, what: `${gw.url} to serve the new route within 1 s` })));
  t.diagnostic(`route served on all 3 nodes ${Date.now() - start} ms after the API answered`);

  // cluster/nodes lists the three with the same snapshot version, the control plane's.
  const nodes = await waitUntil(async () => {
    const r = await api.get('/cluster/nodes');
    const versions = new Set(r.body.data.map((n) => n.snapshot_version));
    return r.body.data.length === 3 && versions.size === 1 && versions.has(r.body.snapshot_version) ? r.body : null;
  }, { timeoutMs: 5000, what: 'the three nodes to report the current version' });
  assert.deepEqual(nodes.data.map((n) => n.node_id), ['node-0', 'node-1', 'node-2']);
  for (const n of nodes.data) {
    assert.equal(n.health, 'healthy');
    assert.match(n.version, /\S/);
    assert.ok(n.seconds_since_contact < 15, JSON.stringify(n));
  }
  const versionBefore = nodes.snapshot_version;

  // The control plane stops: every node keeps serving.
  await cp.stop({ keepDir: true });
  for (const gw of gateways) assert.ok(await serves(gw, 'shared'), `${gw.url} serves with the control plane down`);
  // A node restarted meanwhile serves from the snapshot it saved.
  await gateways[1].stop();
  gateways[1] = await startGateway({ controlPlane: cp.url, nodeId: 'node-1', stateDir: dirs[1], env });
  assert.match(gateways[1].log.text, new RegExp(`saved snapshot.*version ${versionBefore}`));
  assert.ok(await serves(gateways[1], 'shared'), 'the restarted node serves from its saved snapshot');

  // The control plane returns, on the address the nodes know: they catch up with a new route.
  cp = await startControlPlane({ store: pg.url, env, listen: `127.0.0.1:${cp.port}` });
  const api2 = adminClient(cp.url, ADMIN);
  const later = await api2.post('/routes', { name: 'after-outage', strategy: 'random', targets: [{ provider: 'engine-1', model: 'sim-model' }] });
  assert.equal(later.status, 201, later.text);
  await Promise.all(gateways.map((gw) => waitUntil(() => serves(gw, 'after-outage'),
    { timeoutMs: 15000, intervalMs: 50, what: `${gw.url} to catch up after the outage` })));
  const caught = await waitUntil(async () => {
    const r = await api2.get('/cluster/nodes');
    return r.body.data.every((n) => n.snapshot_version === r.body.snapshot_version) ? r.body : null;
  }, { timeoutMs: 10000, what: 'every node on the newest version' });
  assert.ok(caught.snapshot_version > versionBefore);

  // Adaptive, end to end: an adaptive route runs its fallback stack while the policy is off...
  const adaptive = await api2.post('/routes', {
    name: 'adaptive', strategy: 'adaptive',
    targets: [{ provider: 'engine-0', model: 'sim-model' }, { provider: 'engine-1', model: 'sim-model' }],
  });
  assert.equal(adaptive.status, 201, adaptive.text);
  await Promise.all(gateways.map((gw) => waitUntil(() => serves(gw, 'adaptive'), { timeoutMs: 5000, what: 'the adaptive route' })));
  for (const gw of gateways) {
    for (let i = 0; i < 10; i++) await chat(gw.url, 'adaptive', { content: `warm ${i}`, maxTokens: 2 });
    const d = await decisions(gw, 'adaptive');
    assert.equal(d.blend + d.probe + d.exploration, 0, `policy off: fallback only on ${gw.url}: ${JSON.stringify(d)}`);
    assert.ok(d.fallback >= 10, JSON.stringify(d));
  }
  // ...and a PUT turns it on for every node.
  const put = await api2.put('/adaptive-routing-policy', { enabled: true, latency_weight: 1, cost_weight: 0, load_weight: 0, min_samples: 5, exploration_ratio: 0 });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.body.affected_routes, ['adaptive']);
  for (const gw of gateways) {
    await waitUntil(async () => {
      await chat(gw.url, 'adaptive', { content: `on ${Math.random()}`, maxTokens: 2 });
      const d = await decisions(gw, 'adaptive');
      return d.blend > 0 ? d : null;
    }, { timeoutMs: 10000, intervalMs: 10, what: `the blend to engage on ${gw.url}` });
  }
  // Telemetry from every node reaches the control plane within 30 s.
  const telemetry = await waitUntil(async () => {
    const r = await api2.get('/adaptive-routing-telemetry');
    const nodesSeen = new Set(r.body.data.filter((s) => s.route === 'adaptive' && s.sample?.engaged).map((s) => s.node_id));
    return nodesSeen.size === 3 ? r.body.data : null;
  }, { timeoutMs: 35000, intervalMs: 500, what: 'telemetry from the three nodes' });
  const sample = telemetry.find((s) => s.route === 'adaptive').sample;
  assert.equal(sample.policy.enabled, true);
  assert.equal(sample.targets.length, 2);

});
