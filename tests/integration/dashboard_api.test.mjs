// What the dashboard stands on (SPEC §11), over real HTTP: its assets served from the binary at
// /ui/ with a strict Content-Security-Policy; /api/v1/catalog, /api/v1/strategies and
// /api/v1/policy-thresholds; the nodes' stats with per-instance state and per-target latency;
// and the all-in-one `rolter serve`, which reports its own node to its own control plane.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startSim } from '../lib/sim.mjs';
import { startControlPlane, startGateway, adminClient, tempDir } from '../lib/cluster.mjs';
import { binDir, startRolter } from '../lib/rolter.mjs';
import { chat, waitUntil, fetchWithin } from '../lib/http.mjs';

const ADMIN = 'adm-' + 'd'.repeat(24);
const NODE = 'node-' + 'e'.repeat(24);
const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE };

// A request exactly as written: fetch would normalise "..".
function rawGet(baseUrl, rawPath, headers = {}) {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${rawPath}: no answer within 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

function fleetConfig(sim) {
  return [
    `[[providers]]\nname = "a"\nbase_url = "${sim.engines[0].url}"\n`,
    `[[providers]]\nname = "b"\nbase_url = "${sim.engines[1].url}"\n`,
    '[[routes]]\nname = "split"\nstrategy = "weighted"\n' +
      'targets = [{provider = "a", model = "m", weight = 3}, {provider = "b", model = "m", weight = 1}]\n',
    '[[routes]]\nname = "turns"\nstrategy = "round_robin"\n' +
      'targets = [{provider = "a", model = "m", weight = 3}, {provider = "b", model = "m", weight = 1}]\n',
  ].join('\n');
}

describe('the dashboard\'s API on a control plane with a gateway', () => {
  let sim; let cp; let gw; let api;

  before(async () => {
    sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
    const store = `sqlite:${path.join(tempDir('rolter-ui-'), 'rolter.db')}`;
    cp = await startControlPlane({ config: fleetConfig(sim), store, env });
    api = adminClient(cp.url, ADMIN);
    gw = await startGateway({ controlPlane: cp.url, nodeId: 'gw-ui', stateDir: tempDir(), env });
  });

  after(async () => {
    await gw?.stop();
    await cp?.stop();
    await sim?.stop();
  });

  test('assets come from the binary, revalidate by ETag, and nothing else is reachable', async () => {
    const bare = await rawGet(cp.url, '/ui');
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.location, '/ui/');
    const lib = await rawGet(cp.url, '/ui/vendor/uplot.js');
    assert.equal(lib.status, 200);
    assert.equal(lib.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(lib.body, /uPlot/);
    assert.match(lib.headers.etag, /^"[0-9a-f]{16}"$/);
    assert.match(lib.headers['content-security-policy'], /default-src 'self'; script-src 'self'/);
    assert.equal(lib.headers['x-content-type-options'], 'nosniff');
    const css = await rawGet(cp.url, '/ui/vendor/uplot.css');
    assert.equal(css.status, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    const again = await rawGet(cp.url, '/ui/vendor/uplot.js', { 'if-none-match': lib.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    for (const p of ['/ui/../api/v1/whoami', '/ui/%2e%2e/api/v1/whoami', '/ui/.env', '/ui/vendor//uplot.js',
      '/ui/nothing.js', '/ui/vendor/uplot.js/']) {
      const r = await rawGet(cp.url, p, { authorization: `Bearer ${ADMIN}` });
      assert.equal(r.status, 404, p);
      assert.equal(r.body, 'not found\n', p);
    }
    const post = await fetchWithin(`${cp.url}/ui/`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET');
    // A gateway node serves no dashboard: it has no API to show.
    const onNode = await rawGet(gw.url, '/ui/vendor/uplot.js');
    assert.equal(onNode.status, 404);
  });

  test('the catalog states a share only where the strategy reads weights', async () => {
    const created = await api.post('/routes', {
      name: 'canary', strategy: 'policy',
      targets: [{ provider: 'a', model: 'm', weight: 9 }, { provider: 'b', model: 'm', weight: 1 }],
    });
    assert.equal(created.status, 201, created.text);
    const viewer = await api.post('/admin-tokens', { name: 'looker', role: 'viewer' });
    assert.equal(viewer.status, 201, viewer.text);
    const catalog = await adminClient(cp.url, viewer.body.token).get('/catalog');
    assert.equal(catalog.status, 200, catalog.text);
    const byName = Object.fromEntries(catalog.body.data.map((e) => [e.name, e]));
    assert.deepEqual(byName.split.targets.map((t) => t.share), [0.75, 0.25]);
    assert.equal(byName.split.reads_weights, true);
    assert.equal(byName.split.weights_note, null);
    assert.equal(byName.split.read_only, true);
    assert.deepEqual(byName.turns.targets.map((t) => t.share), [null, null]);
    assert.equal(byName.turns.reads_weights, false);
    assert.equal(byName.turns.weights_note, 'strategy round_robin ignores weights');
    // Policy mode with weights on every target and no plugin: the target-weight split.
    assert.deepEqual(byName.canary.targets.map((t) => t.share), [0.9, 0.1]);
    assert.equal(byName.canary.read_only, false);
    assert.deepEqual(byName.canary.targets.map((t) => t.instances), [1, 1]);
    // With a plugin, the weights no longer split traffic.
    const withPlugin = await api.put('/routes/canary', {
      strategy: 'policy', policy: { least_inflight: { weight: 1 } },
      targets: [{ provider: 'a', model: 'm', weight: 9 }, { provider: 'b', model: 'm', weight: 1 }],
    });
    assert.equal(withPlugin.status, 200, withPlugin.text);
    const after = (await api.get('/catalog')).body.data.find((e) => e.name === 'canary');
    assert.deepEqual(after.targets.map((t) => t.share), [null, null]);
    assert.equal(after.weights_note, 'strategy policy ignores weights');
    assert.equal((await adminClient(cp.url, '').get('/catalog')).status, 401);
    assert.equal((await api.post('/catalog', {})).status, 405);
  });

  test('the strategy picker\'s list: adaptive is not a route\'s choice, and telemetry needs are named', async () => {
    const r = await api.get('/strategies');
    assert.equal(r.status, 200, r.text);
    const byName = Object.fromEntries(r.body.data.map((s) => [s.name, s]));
    assert.equal(byName.adaptive.per_route, false);
    assert.equal(byName.precise_cache_aware.telemetry, 'kv_events');
    assert.equal(byName.lmcache_aware.telemetry, 'lmcache');
    assert.equal(byName.round_robin.telemetry, null);
    assert.equal(byName.policy.per_route, true);
    assert.equal(byName.weighted.reads_weights, true);
    assert.equal(byName.random.reads_weights, false);
    assert.equal(r.body.data.filter((s) => s.per_route).length, r.body.data.length - 1);
  });

  test('policy thresholds are the command\'s own numbers', async () => {
    for (const [targets, ratios] of [['2', '1:1'], ['3..5', '1.5:1,4:1'], ['8', '0.5:2']]) {
      const r = await api.get(`/policy-thresholds?targets=${encodeURIComponent(targets)}&ratios=${encodeURIComponent(ratios)}`);
      assert.equal(r.status, 200, r.text);
      const cli = JSON.parse(execFileSync(path.join(binDir, 'rolter'),
        ['policy-thresholds', '--targets', targets, '--ratios', ratios, '--json']).toString());
      assert.deepEqual(r.body.data, cli, `${targets} ${ratios}`);
      assert.ok(cli.length > 0);
    }
    const bad = await api.get('/policy-thresholds?targets=1&ratios=1:1');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'targets');
    assert.match(bad.body.error.message, /^target count 1 is outside 2\.\.64/);
    const badRatio = await api.get('/policy-thresholds?targets=2&ratios=0:1');
    assert.equal(badRatio.status, 400);
    assert.equal(badRatio.body.error.param, 'ratios');
  });

  test('node stats carry each instance\'s state and each target\'s latency', async () => {
    for (let i = 0; i < 8; i++) {
      const r = await chat(gw.url, 'split', { content: `hello ${i}` });
      assert.equal(r.status, 200, r.text);
    }
    let node;
    await waitUntil(async () => {
      const r = await api.get('/cluster/nodes');
      node = r.body.data.find((n) => n.node_id === 'gw-ui');
      const split = node?.stats?.routes?.find((x) => x.route === 'split');
      return split !== undefined && split.requests['2xx'] === 8;
    }, { timeoutMs: 15000, intervalMs: 250, what: 'the gateway\'s stats to show its 8 requests' });
    const split = node.stats.routes.find((x) => x.route === 'split');
    const targets = Object.fromEntries(split.targets.map((t) => [t.target, t]));
    assert.deepEqual(Object.keys(targets).sort(), ['a/m', 'b/m']);
    assert.equal(targets['a/m'].picks, 6);  // smooth weighted round robin: exactly 3:1
    assert.equal(targets['a/m'].duration_ms.count, 6);
    assert.equal(targets['b/m'].duration_ms.count, 2);
    assert.equal(targets['a/m'].duration_ms.buckets.at(-1).le, null);
    assert.equal(targets['a/m'].duration_ms.buckets.at(-1).count, 6);
    assert.equal(typeof targets['a/m'].duration_ms.p50, 'number');
    const instances = Object.fromEntries(node.stats.instances.map((x) => [x.provider, x]));
    for (const [name, engine] of [['a', sim.engines[0]], ['b', sim.engines[1]]]) {
      assert.deepEqual(instances[name], {
        endpoint: `${name}@${engine.url}`, provider: name, base_url: engine.url, in_flight: 0,
        breaker: 'closed', healthy: true, parked: false, kv_events: null, lmcache_occupancy: null,
        engine_load: null,
      });
    }
  });
});

test('rolter serve shows its own node: stats and adaptive telemetry reach its control plane', async () => {
  const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  const config = fleetConfig(sim) +
    '\n[[routes]]\nname = "adaptive"\nstrategy = "adaptive"\n' +
    'targets = [{provider = "a", model = "m"}, {provider = "b", model = "m"}]\n' +
    '\n[adaptive_routing]\nenabled = true\nmin_samples = 4\n';
  const rolter = await startRolter({ config, env: { ROLTER_ADMIN_TOKEN: ADMIN }, args: ['--node-id', 'all-in-one'] });
  try {
    const api = adminClient(rolter.url, ADMIN);
    for (let i = 0; i < 12; i++) {
      const r = await chat(rolter.url, 'adaptive', { content: `hi ${i}` });
      assert.equal(r.status, 200, r.text);
    }
    await waitUntil(async () => {
      const nodes = (await api.get('/cluster/nodes')).body.data;
      const me = nodes.find((n) => n.node_id === 'all-in-one');
      return me?.stats?.routes?.find((x) => x.route === 'adaptive')?.requests['2xx'] === 12;
    }, { timeoutMs: 15000, intervalMs: 250, what: 'the node\'s own stats' });
    const nodes = (await api.get('/cluster/nodes')).body.data;
    assert.deepEqual(nodes.map((n) => n.node_id), ['all-in-one']);
    assert.equal(nodes[0].health, 'healthy');
    let sample;
    await waitUntil(async () => {
      const rows = (await api.get('/adaptive-routing-telemetry')).body.data;
      sample = rows.find((row) => row.node_id === 'all-in-one' && row.route === 'adaptive')?.sample;
      return sample !== undefined;
    }, { timeoutMs: 25000, intervalMs: 500, what: 'the node\'s adaptive telemetry (every 15 s)' });
    assert.equal(sample.served, 12);
    assert.deepEqual(sample.targets.map((t) => t.target).sort(), ['a/m', 'b/m']);
    assert.equal(sample.policy.enabled, true);
  } finally {
    await rolter.stop();
    await sim.stop();
  }
});
