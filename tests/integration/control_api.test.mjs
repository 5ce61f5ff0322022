// The admin API (SPEC §10), the same suite on both stores: SQLite, and a real PostgreSQL 15 server
// started in a temporary directory. A control plane serves a config file (read-only entities) and
// the store; a gateway node follows it in front of a rolter-sim fleet.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startSim } from '../lib/sim.mjs';
import { startControlPlane, startGateway, adminClient, tempDir } from '../lib/cluster.mjs';
import { startPostgres } from '../lib/postgres.mjs';
import { chat, waitUntil, fetchWithin } from '../lib/http.mjs';

const ADMIN = 'adm-' + 'x'.repeat(24);
const NODE = 'node-' + 'y'.repeat(24);
const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE };

for (const backend of ['sqlite', 'postgres']) {
  describe(`admin API on ${backend}`, () => {
    let sim; let pg; let cp; let gw; let api; let stateDir; let storeUrl; const secrets = [];

    before(async () => {
      sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
      if (backend === 'postgres') {
        pg = await startPostgres();
        storeUrl = pg.url;
      } else {
        storeUrl = `sqlite:${path.join(tempDir('rolter-sqlite-'), 'rolter.db')}`;
      }
      const config = `[[providers]]\nname = "file-engine"\nbase_url = "${sim.engines[0].url}"\n\n` +
        `[[routes]]\nname = "from-file"\nstrategy = "round_robin"\n` +
        `[[routes.targets]]\nprovider = "file-engine"\nmodel = "m"\n`;
      cp = await startControlPlane({ config, store: storeUrl, env });
      api = adminClient(cp.url, ADMIN);
      stateDir = tempDir();
      gw = await startGateway({ controlPlane: cp.url, nodeId: `gw-${backend}`, stateDir, env });
    });

    after(async () => {
      await gw?.stop();
      await cp?.stop();
      await pg?.stop();
      await sim?.stop();
    });

    test('the store is the one asked for, and the file\'s entities are read-only', async () => {
      assert.match(cp.log.text, new RegExp(`store: .* \\(${backend}, schema \\d+\\)`));
      const routes = await api.get('/routes');
      assert.equal(routes.status, 200, routes.text);
      const fromFile = routes.body.data.find((r) => r.name === 'from-file');
      assert.deepEqual(fromFile, {
        name: 'from-file', strategy: 'round_robin', read_only: true,
        targets: [{ provider: 'file-engine', model: 'm' }],
      });
      const put = await api.put('/routes/from-file', { strategy: 'random', targets: [{ provider: 'file-engine', model: 'm' }] });
      assert.equal(put.status, 403, put.text);
      assert.equal(put.body.error.code, 'read_only');
      const del = await api.del('/providers/file-engine');
      assert.equal(del.status, 403, del.text);
    });

    test('libpq is mapped only by a process that speaks to PostgreSQL; libsystemd by none here', () => {
      const mapped = (proc) => readFileSync(`/proc/${proc.child.pid}/maps`, 'utf8');
      const cpMaps = mapped(cp);
      assert.equal(/\/libpq\.so\.5/.test(cpMaps), backend === 'postgres', `control plane on ${backend}`);
      assert.equal(/\/libgnutls\.so/.test(cpMaps), backend === 'postgres', 'GnuTLS comes only with libpq');
      assert.doesNotMatch(cpMaps, /libsystemd\.so/, 'no NOTIFY_SOCKET');
      const gwMaps = mapped(gw);
      assert.doesNotMatch(gwMaps, /\/libpq\.so|libsystemd\.so|libgnutls/, 'a gateway node has no store');
      assert.match(gwMaps, /\/libc\.so\.6/, 'the maps were read');
    });

    test('CRUD round trips mirror rolter.toml key for key', async () => {
      const provider = {
        name: 'api-engine', kind: 'openai', base_url: sim.engines[1].url, max_loras: 4,
        cost: { input: 0.2, output: 0.6 },
      };
      const created = await api.post('/providers', provider);
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body, { ...provider, read_only: false });
      const got = await api.get('/providers/api-engine');
      assert.deepEqual(got.body, { ...provider, read_only: false });

      const route = {
        name: 'api-route', strategy: 'weighted',
        targets: [{ provider: 'api-engine', model: 'up', weight: 3 }, { provider: 'file-engine', model: 'm', weight: 1 }],
      };
      const r = await api.post('/routes', route);
      assert.equal(r.status, 201, r.text);
      assert.deepEqual((await api.get('/routes/api-route')).body, { ...route, read_only: false });

      const updated = await api.put('/providers/api-engine', { ...provider, max_loras: 16 });
      assert.equal(updated.status, 200, updated.text);
      assert.equal((await api.get('/providers/api-engine')).body.max_loras, 16);

      const group = { slug: 'fleet', strategy: 'round_robin', members: [{ provider: 'api-engine', weight: 2 }] };
      const g = await api.post('/provider-groups', group);
      assert.equal(g.status, 201, g.text);
      assert.deepEqual((await api.get('/provider-groups/fleet')).body, { ...group, read_only: false });
      const gDel = await api.del('/provider-groups/fleet');
      assert.equal(gDel.status, 200, gDel.text);
      assert.equal((await api.get('/provider-groups/fleet')).status, 404);

      const dup = await api.post('/routes', route);
      assert.equal(dup.status, 409, dup.text);
      assert.equal(dup.body.error.code, 'already_exists');

      // The gateway serves the route created through the API.
      await waitUntil(async () => (await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2 })).status === 200,
        { timeoutMs: 5000, what: 'the gateway to serve api-route' });
    });

    test('validation errors name the field, in the OpenAI error shape', async () => {
      const cases = [
        [{ name: 'bad-1', strategy: 'round_robin', targets: [{ provider: 'nope', model: 'x' }] }, 'targets[0].provider'],
        [{ name: 'bad-2', strategy: 'no_such_strategy', targets: [{ provider: 'api-engine', model: 'x' }] }, 'strategy'],
        [{ name: 'bad-3', strategy: 'weighted', targets: [{ provider: 'api-engine', model: 'x', weight: -1 }] }, 'targets[0].weight'],
        [{ name: 'bad-4', strategy: 'round_robin', targets: [{ provider: 'api-engine', model: 'x' }], colour: 'red' }, 'colour'],
      ];
      for (const [body, param] of cases) {
        const r = await api.post('/routes', body);
        assert.equal(r.status, 400, `${body.name}: ${r.text}`);
        assert.equal(r.body.error.type, 'invalid_request_error');
        assert.equal(r.body.error.param, param, `${body.name}: ${r.text}`);
        assert.equal(typeof r.body.error.message, 'string');
        assert.equal((await api.get(`/routes/${body.name}`)).status, 404, 'a refused write stores nothing');
      }
      const badProvider = await api.post('/providers', { name: 'p-bad', base_url: 'not a url' });
      assert.equal(badProvider.status, 400, badProvider.text);
      assert.equal(badProvider.body.error.param, 'base_url');
      // Deleting a provider a route uses names the route's field.
      const inUse = await api.del('/providers/api-engine');
      assert.equal(inUse.status, 400, inUse.text);
      assert.match(inUse.body.error.message, /route 'api-route'/);
      assert.equal(inUse.body.error.param, 'routes[api-route].targets[0].provider');
      const notJson = await api.post('/routes', '{"name": ');
      assert.equal(notJson.status, 400, notJson.text);
    });

    test('roles: a viewer cannot write, an admin cannot change the adaptive policy', async () => {
      const viewer = await api.post('/admin-tokens', { name: 'watcher', role: 'viewer' });
      assert.equal(viewer.status, 201, viewer.text);
      assert.match(viewer.body.token, /^rat-[0-9a-f]{16}-/);
      const admin = await api.post('/admin-tokens', { name: 'operator', role: 'admin' });
      assert.equal(admin.status, 201, admin.text);
      secrets.push(viewer.body.token, admin.body.token);
      const asViewer = adminClient(cp.url, viewer.body.token);
      const asAdmin = adminClient(cp.url, admin.body.token);

      assert.deepEqual((await asViewer.get('/whoami')).body, { name: 'watcher', role: 'viewer' });
      assert.equal((await asViewer.get('/routes')).status, 200);
      const viewerWrite = await asViewer.post('/routes', { name: 'v', strategy: 'random', targets: [{ provider: 'file-engine', model: 'm' }] });
      assert.equal(viewerWrite.status, 403, viewerWrite.text);
      assert.equal(viewerWrite.body.error.type, 'permission_error');
      assert.equal((await asViewer.del('/routes/api-route')).status, 403);
      assert.equal((await asViewer.get('/routes/v')).status, 404);

      const adminWrite = await asAdmin.post('/routes', { name: 'by-admin', strategy: 'random', targets: [{ provider: 'file-engine', model: 'm' }] });
      assert.equal(adminWrite.status, 201, adminWrite.text);
      const policy = await asAdmin.put('/adaptive-routing-policy', { enabled: true });
      assert.equal(policy.status, 403, policy.text);
      assert.equal((await asAdmin.get('/adaptive-routing-policy')).status, 403);
      assert.equal((await asAdmin.get('/adaptive-routing-telemetry')).status, 403);
      assert.equal((await asAdmin.post('/admin-tokens', { name: 'x', role: 'superadmin' })).status, 403);

      assert.equal((await adminClient(cp.url, 'rat-0000000000000000-nope').get('/routes')).status, 401);
      assert.equal((await adminClient(cp.url, undefined).get('/routes')).status, 401);
      // A revoked token stops working.
      const revoked = await api.del(`/admin-tokens/${viewer.body.id}`);
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal((await asViewer.get('/routes')).status, 401);
      const listed = await api.get('/admin-tokens');
      assert.ok(!listed.text.includes(viewer.body.token), 'tokens are shown once');
      assert.ok(!/sha256|salt/.test(listed.text), listed.text);
    });

    test('adaptive policy: refuses an all-zero blend, lists the affected routes, audits', async () => {
      const zero = await api.put('/adaptive-routing-policy', { latency_weight: 0, cost_weight: 0, load_weight: 0 });
      assert.equal(zero.status, 400, zero.text);
      assert.equal(zero.body.error.param, 'latency_weight');
      const route = await api.post('/routes', { name: 'adaptive-route', strategy: 'adaptive', targets: [{ provider: 'file-engine', model: 'm' }, { provider: 'api-engine', model: 'up' }] });
      assert.equal(route.status, 201, route.text);
      const put = await api.put('/adaptive-routing-policy', { enabled: true, cost_weight: -2, exploration_ratio: 0.9 });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.body.affected_routes, ['adaptive-route']);
      assert.equal(put.body.policy.enabled, true);
      assert.equal(put.body.policy.cost_weight, 0, 'negative weights count as 0');
      assert.equal(put.body.policy.exploration_ratio, 0.5, 'exploration is clamped to 0.5');
      const audit = await api.get('/audit?q=adaptive_routing_policy');
      const row = audit.body.data[0];
      assert.equal(row.action, 'adaptive_routing_policy.update');
      assert.equal(row.actor, 'ROLTER_ADMIN_TOKEN');
      assert.equal(row.before.enabled, false);
      assert.equal(row.after.enabled, true);
    });

    test('a key is shown once, works on a gateway, and stops working when revoked', async () => {
      const created = await api.post('/keys', { name: 'team-a', routes: ['api-route'], providers: [] });
      assert.equal(created.status, 201, created.text);
      const key = created.body.key;
      secrets.push(key);
      assert.match(key, /^rk-[0-9a-f]{16}-[0-9a-f]{48}$/);
      for (const r of [await api.get('/keys/team-a'), await api.get('/keys'), await api.get('/audit?q=team-a')]) {
        assert.equal(r.status, 200, r.text);
        assert.ok(!r.text.includes(key), 'the key is shown only at creation');
        assert.ok(!/key_sha256|key_salt/.test(r.text), r.text);
      }
      assert.deepEqual((await api.get('/keys/team-a')).body, { name: 'team-a', routes: ['api-route'], providers: [], read_only: false });
      const secretField = await api.post('/keys', { name: 'k2', key_sha256: 'a'.repeat(64) });
      assert.equal(secretField.status, 400);
      assert.equal(secretField.body.error.param, 'key_sha256');

      const withKey = (k) => ({ headers: { authorization: `Bearer ${k}` } });
      // Until the snapshot with the key arrives the gateway is open, so wait for it to refuse a
      // request without a key, not for the key to work.
      await waitUntil(async () => (await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2 })).status === 401,
        { timeoutMs: 5000, what: 'the gateway to require keys' });
      assert.equal((await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2, ...withKey(key) })).status, 200);
      const tampered = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
      assert.equal((await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2, ...withKey(tampered) })).status, 401);
      assert.equal((await chat(gw.url, 'from-file', { content: 'hi', maxTokens: 2, ...withKey(key) })).status, 403,
        'the key is limited to its routes');

      const revoked = await api.del('/keys/team-a');
      assert.equal(revoked.status, 200, revoked.text);
      // No key left: the gateway is open again, so revoke with a second key in place.
      const other = await api.post('/keys', { name: 'team-b' });
      secrets.push(other.body.key);
      await waitUntil(async () => (await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2, ...withKey(key) })).status === 401,
        { timeoutMs: 5000, what: 'the revoked key to be refused' });
      assert.equal((await chat(gw.url, 'api-route', { content: 'hi', maxTokens: 2, ...withKey(other.body.key) })).status, 200);
      const audit = await api.get('/audit?q=key/team-a');
      assert.deepEqual(audit.body.data.map((a) => a.action), ['key.revoke', 'key.create']);
    });

    test('every change has an audit row: who, what, when, before and after', async () => {
      const all = await api.get('/audit?limit=1000');
      assert.equal(all.status, 200, all.text);
      const actions = all.body.data.map((a) => `${a.action} ${a.subject}`);
      for (const expected of [
        'provider.create provider/api-engine', 'provider.update provider/api-engine',
        'route.create route/api-route', 'provider_group.create provider_group/fleet',
        'provider_group.delete provider_group/fleet', 'admin_token.create', 'admin_token.revoke',
        'route.create route/by-admin', 'key.create key/team-a', 'key.revoke key/team-a',
      ]) {
        assert.ok(actions.some((a) => a.startsWith(expected)), `no audit row for ${expected}: ${actions.join(', ')}`);
      }
      const update = all.body.data.find((a) => a.action === 'provider.update');
      assert.equal(update.before.max_loras, 4);
      assert.equal(update.after.max_loras, 16);
      assert.equal(update.actor, 'ROLTER_ADMIN_TOKEN');
      assert.ok(Math.abs(update.at_ms - Date.now()) < 120000);
      const byAdmin = all.body.data.find((a) => a.subject === 'route/by-admin');
      assert.equal(byAdmin.actor, 'operator');
      const created = all.body.data.find((a) => a.action === 'route.create' && a.subject === 'route/api-route');
      assert.equal(created.before, null);
      const ids = all.body.data.map((a) => a.id);
      assert.deepEqual(ids, [...ids].sort((x, y) => y - x), 'newest first');
      // Refused writes leave no row.
      assert.ok(!actions.some((a) => a.includes('bad-')), actions.join(', '));
      const page = await api.get('/audit?limit=2&offset=1');
      assert.deepEqual(page.body.data.map((a) => a.id), ids.slice(1, 3));
    });

    test('internal endpoints refuse requests without the node token', async () => {
      for (const [method, route] of [['GET', '/internal/snapshot?version=0'], ['POST', '/internal/adaptive-telemetry'], ['POST', '/internal/node-stats']]) {
        for (const auth of [undefined, 'Bearer wrong', `Bearer ${ADMIN}`]) {
          const headers = { 'x-rolter-node-id': 'intruder', 'content-type': 'application/json' };
          if (auth) headers.authorization = auth;
          const res = await fetchWithin(`${cp.url}${route}`, { method, headers, body: method === 'POST' ? '{"routes":[]}' : undefined });
          assert.equal(res.status, 401, `${method} ${route} with ${auth}`);
          const text = await res.text();
          assert.ok(!text.includes('version ='), 'no document without the token');
        }
      }
      const missingId = await fetchWithin(`${cp.url}/internal/snapshot?version=0`, { headers: { authorization: `Bearer ${NODE}` } });
      assert.equal(missingId.status, 400);
      const nodes = await api.get('/cluster/nodes');
      assert.ok(!nodes.body.data.some((n) => n.node_id === 'intruder'), 'a refused request registers no node');
    });

    test('hostile input gets a clear error and changes nothing', async () => {
      const before = (await api.get('/audit?limit=1000')).body.data.length;
      // Well-formed, but nested 100,000 deep: refused before any recursive step sees it.
      const deep = await api.post('/routes', `{"name":"deep","x":${'['.repeat(100000)}${']'.repeat(100000)}}`);
      assert.equal(deep.status, 400, deep.text);
      assert.equal(deep.body.error.code, 'invalid_json');
      const nested = { name: 'deep', strategy: 'random', targets: [{ provider: 'file-engine', model: 'm' }], x: JSON.parse('['.repeat(40) + ']'.repeat(40)) };
      assert.equal((await api.post('/routes', nested)).status, 400);
      const big = await api.post('/routes', { name: 'big', pad: 'x'.repeat(2 << 20) });
      assert.equal(big.status, 413, big.text);
      for (const name of ['a%01b', '%FF%FE']) {
        const r = await api.put(`/routes/${name}`, { strategy: 'random', targets: [{ provider: 'file-engine', model: 'm' }] });
        assert.equal(r.status, 400, `${name}: ${r.text}`);
        assert.equal(r.body.error.param, 'name');
      }
      assert.equal((await api.get('/no-such-thing')).status, 404);
      assert.equal((await api.put('/routes', {})).status, 405);
      assert.equal((await api.post('/routes', [1, 2])).status, 400);
      assert.equal((await api.post('/routes', { name: 7 })).status, 400);
      const node = (id, body, extra = {}) => fetchWithin(`${cp.url}/internal/adaptive-telemetry`, {
        method: 'POST', body,
        headers: { authorization: `Bearer ${NODE}`, 'x-rolter-node-id': id, 'content-type': 'application/json', ...extra },
      });
      assert.equal((await node('bad id', '{"routes":[]}')).status, 400);
      assert.equal((await node('n1', '{"routes":{}}')).status, 400);
      assert.equal((await node('n1', '{"routes":[{"route":5}]}')).status, 400);
      assert.equal((await node('n1', 'x'.repeat(5 << 20))).status, 413);
      const poll = await fetchWithin(`${cp.url}/internal/snapshot?version=abc`, { headers: { authorization: `Bearer ${NODE}`, 'x-rolter-node-id': 'n1' } });
      assert.equal(poll.status, 400);
      // The control plane still answers, and no refused request left an audit row.
      const after = await api.get('/audit?limit=1000');
      assert.equal(after.status, 200);
      assert.equal(after.body.data.length, before);
      const nodes = (await api.get('/cluster/nodes')).body.data.map((n) => n.node_id);
      assert.ok(!nodes.includes('bad id'), nodes.join(','));
    });

    test('no key, token or secret in logs, metrics or listings', async () => {
      const everything = [ADMIN, NODE, ...secrets];
      const metrics = await (await fetchWithin(`${cp.url}/metrics`)).text();
      assert.match(metrics, /rolter_admin_api_requests_total/);
      assert.match(metrics, /rolter_internal_api_refused_total \d+/);
      const gwMetrics = await (await fetchWithin(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${secrets.at(-1)}` } })).text();
      const listings = await Promise.all(['/providers', '/routes', '/keys', '/audit?limit=1000', '/admin-tokens', '/cluster/nodes'].map((r) => api.get(r)));
      const saved = readFileSync(path.join(stateDir, 'snapshot.toml'), 'utf8');
      for (const [where, text] of [['control plane log', cp.log.text], ['gateway log', gw.log.text], ['metrics', metrics + gwMetrics],
        ['listings', listings.map((l) => l.text).join('\n')], ['saved snapshot', saved]]) {
        for (const secret of everything) assert.ok(!text.includes(secret), `${where} holds a secret`);
      }
    });
  });
}
