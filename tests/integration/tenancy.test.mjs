// Tenancy (SPEC §15): per-key limits, budgets and usage, on one `rolter serve` (the local backend)
// and across `rolter gateway` nodes sharing a real redis-server. Each refusal is checked for its
// status, its API-shaped error, its Retry-After and its rate-limit fields; each admission limit
// for what the engine itself saw (its peak in-flight count, its token counts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFleet, startRolter } from '../lib/rolter.mjs';
import { startSimFor } from '../lib/sim.mjs';
import { startRedis, redisCli } from '../lib/redis.mjs';
import { startControlPlane, startGateway, adminClient } from '../lib/cluster.mjs';
import { postJson, settle, waitUntil, fetchWithin } from '../lib/http.mjs';

const ADMIN = 'tenancy-admin-token-0123456789';
const NODE = 'tenancy-node-token-0123456789';

async function ask(url, key, { model = 'm', maxTokens = 2, content = 'hello', path = '/v1/chat/completions', body } = {}) {
  const request = body ?? { model, messages: [{ role: 'user', content }], max_tokens: maxTokens };
  const res = await postJson(`${url}${path}`, request, { headers: { authorization: `Bearer ${key}` }, timeoutMs: 20000 });
  return settle(res);
}

const count = (results, status) => results.filter((r) => r.status === status).length;

// /metrics of a gateway whose [[keys]] guard it.
async function scrapeMetrics(gateway, key = 'sk-a') {
  const r = await settle(await fetchWithin(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${key}` } }));
  assert.equal(r.status, 200, r.text);
  return r.text;
}

function limitValue(text, metric, label) {
  const m = text.match(new RegExp(`^${metric}\\{reason="${label}"\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

// One engine as provider "engine-0" behind route "m".
const fleetToml = (url) => `[[providers]]
name = "engine-0"
base_url = "${url}"
[[routes]]
name = "m"
[[routes.targets]]
provider = "engine-0"
model = "sim-model"`;

function fleetConfig(engines, { keys, extra = '' }) {
  return `
[server]
listen = "127.0.0.1:0"
[[providers]]
name = "engine-0"
base_url = "${engines[0].url}"
[providers.cost]
input = 1000
output = 2000
[[routes]]
name = "m"
[[routes.targets]]
provider = "engine-0"
model = "sim-model"
${keys}
${extra}`;
}

test('a key over its rpm gets 429s with Retry-After and rate-limit fields; other keys pass untouched', async (t) => {
  const { rolter } = await startFleet(t, {
    config: (engines) => fleetConfig(engines, {
      keys: `
[[keys]]
name = "burst"
key_env = "K_BURST"
rpm = 6
burst = 5
[[keys]]
name = "free"
key_env = "K_FREE"`,
    }),
    env: { K_BURST: 'sk-burst', K_FREE: 'sk-free' },
  });
  const results = await Promise.all(Array.from({ length: 12 }, () => ask(rolter.url, 'sk-burst')));
  // A burst of 5, and one more request every 10 s: the 12 arrive within a second or two.
  assert.ok(count(results, 200) >= 5 && count(results, 200) <= 6, results.map((r) => r.status).join());
  assert.equal(count(results, 200) + count(results, 429), 12);
  for (const r of results) {
    assert.equal(r.headers.get('x-ratelimit-limit-requests'), '5');
    assert.match(r.headers.get('ratelimit-policy'), /"key-rpm";q=5;w=50/);
    assert.match(r.headers.get('ratelimit'), /"key-rpm";r=\d+;t=\d+/);
    if (r.status === 429) {
      assert.equal(r.json.error.type, 'rate_limit_exceeded');
      assert.equal(r.json.error.code, 'rate_limit_exceeded');
      assert.match(r.json.error.message, /key 'burst': 6 requests per minute/);
      const retryAfter = Number(r.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`);
      assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.equal(r.target, undefined, 'a refused request reaches no engine');
    } else {
      assert.equal(r.target, 'engine-0/sim-model');
    }
  }
  // The Anthropic shape on /v1/messages.
  const messages = await ask(rolter.url, 'sk-burst', {
    path: '/v1/messages',
    body: { model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] },
  });
  assert.equal(messages.status, 429, messages.text);
  assert.equal(messages.json.type, 'error');
  assert.equal(messages.json.error.type, 'rate_limit_exceeded');
  // An unlimited key pays nothing and carries no limit fields.
  const free = await ask(rolter.url, 'sk-free');
  assert.equal(free.status, 200);
  assert.equal(free.headers.get('x-ratelimit-limit-requests'), null);
  assert.equal(free.headers.get('ratelimit'), null);
  const metrics = await scrapeMetrics(rolter, 'sk-free');
  assert.equal(limitValue(metrics, 'rolter_limit_refusals_total', 'rate_limit'), count(results, 429) + 1);
});

test('a budget refuses with budget_exceeded once its spend and the next estimate would pass it', async (t) => {
  // Prices per million tokens: $1,000 in, $2,000 out, so a token costs a tenth of a cent or two.
  const { rolter } = await startFleet(t, {
    config: (engines) => fleetConfig(engines, {
      keys: `
[[keys]]
name = "capped"
key_env = "K_CAPPED"
budget = { usd = 0.05, period = "day" }`,
    }),
    env: { K_CAPPED: 'sk-capped' },
  });
  let spent = 0;
  let refused;
  for (let i = 0; i < 40 && !refused; ++i) {
    const r = await ask(rolter.url, 'sk-capped', { maxTokens: 3 });
    if (r.status === 200) {
      spent += (r.json.usage.prompt_tokens * 1000 + r.json.usage.completion_tokens * 2000) / 1e6;
    } else {
      refused = r;
    }
  }
  assert.ok(refused, 'the budget never refused');
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.json.error.type, 'budget_exceeded');
  assert.match(refused.json.error.message, /key 'capped': budget of \$0\.05 per day/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 86400, `Retry-After ${retryAfter}`);
  // Never over the budget; refused only when the next request's estimate would not fit.
  assert.ok(spent <= 0.05 + 1e-9, `spent ${spent}`);
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 });
  const estimate = (Math.ceil(Buffer.byteLength(body) / 4) * 1000 + 3 * 2000) / 1e6;
  assert.ok(spent + estimate > 0.05 - 1e-9, `spent ${spent} + estimate ${estimate} fits the budget`);
});

// Three gateway nodes on one control plane, their limits counted in one redis-server.
async function redisCluster(t, { engines = 1, simArgs, keys, limitsExtra = '' }) {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const sim = await startSimFor(t, { engines, args: simArgs });
  const config = `
[limits]
backend = "redis"
redis_url = "${redis.url}"
timeout_ms = 200
${limitsExtra}
${fleetToml(sim.engines[0].url)}
${keys}`;
  const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE, K_A: 'sk-a' };
  const cp = await startControlPlane({ config, env });
  t.after(() => cp.stop());
  const gateways = [];
  for (let i = 0; i < 3; ++i) {
    gateways.push(await startGateway({ controlPlane: cp.url, nodeId: `node-${i}`, env }));
  }
  t.after(() => Promise.all(gateways.map((g) => g.stop())));
  return { redis, sim, cp, gateways };
}

test('three nodes sharing Redis admit exactly the burst of one rpm limit', { timeout: 120000 }, async (t) => {
  const { gateways } = await redisCluster(t, {
    simArgs: ['--time-scale', '0'],
    keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\nrpm = 60\nburst = 60\n',
  });
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: 300 },
    (_, i) => ask(gateways[i % 3].url, 'sk-a')));
  const elapsedS = (Date.now() - started) / 1000;
  const ok = count(results, 200);
  // Exactly the burst, plus one for each whole second the 300 took past it.
  assert.ok(ok >= 60 && ok <= 60 + Math.ceil(elapsedS), `${ok} answered in ${elapsedS} s`);
  assert.equal(ok + count(results, 429), 300);
  for (const r of results.filter((x) => x.status === 429)) {
    assert.equal(r.json.error.type, 'rate_limit_exceeded');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal(r.headers.get('x-ratelimit-limit-requests'), '60');
    assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '0');
  }
  t.diagnostic(`${ok} of 300 answered over 3 nodes in ${elapsedS.toFixed(2)} s`);
});

test('max_in_flight = 4 holds across three nodes, by the engine\'s own count', { timeout: 120000 }, async (t) => {
  const { sim, gateways } = await redisCluster(t, {
    simArgs: ['--ttft-ms', '300', '--token-ms', '20'],
    keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\nmax_in_flight = 4\n',
  });
  await sim.reset(0);
  const results = await Promise.all(Array.from({ length: 24 },
    (_, i) => ask(gateways[i % 3].url, 'sk-a', { maxTokens: 5 })));
  const stats = await sim.stats(0);
  assert.ok(stats.peak_in_flight <= 4, `the engine saw ${stats.peak_in_flight} at once`);
  assert.ok(count(results, 200) >= 4, 'at least one full set of four was served');
  assert.ok(count(results, 429) > 0, 'nothing was refused');
  assert.equal(count(results, 200), stats.requests);
  for (const r of results.filter((x) => x.status === 429)) {
    assert.match(r.json.error.message, /key 'a': 4 requests in flight/);
  }
  // Settlement frees the leases: four more pass once the first ones are done.
  const again = await Promise.all(Array.from({ length: 4 }, (_, i) => ask(gateways[i % 3].url, 'sk-a')));
  assert.deepEqual(again.map((r) => r.status), [200, 200, 200, 200]);
});

test('tpm holds within one request\'s estimate across nodes', { timeout: 120000 }, async (t) => {
  const { sim, gateways } = await redisCluster(t, {
    simArgs: ['--time-scale', '0'],
    keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\ntpm = 2000\n',
  });
  await sim.reset(0);
  const results = await Promise.all(Array.from({ length: 90 },
    (_, i) => ask(gateways[i % 3].url, 'sk-a', { maxTokens: 40, content: 'one two three four five' })));
  const stats = await sim.stats(0);
  const used = stats.usage.prompt_tokens + stats.usage.completion_tokens;
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'one two three four five' }], max_tokens: 40 });
  const estimate = Math.ceil(Buffer.byteLength(body) / 4) + 40;
  assert.ok(count(results, 429) > 0, 'tpm never refused');
  assert.ok(used <= 2000 + estimate, `the engine served ${used} tokens against tpm 2000`);
  for (const r of results.filter((x) => x.status === 429)) {
    assert.match(r.json.error.message, /key 'a': 2000 tokens per minute/);
    assert.equal(r.headers.get('x-ratelimit-limit-tokens'), '2000');
  }
});

test('Redis faults: open admits and counts, closed answers 503, a restart resumes enforcement', { timeout: 120000 }, async (t) => {
  const sim = await startSimFor(t, { args: ['--time-scale', '0'] });
  const redis = await startRedis();
  t.after(() => redis.stop());
  const config = (policy) => fleetConfig(sim.engines, {
    keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\nrpm = 600\nburst = 3\n',
    extra: `[limits]\nbackend = "redis"\nredis_url = "${redis.url}"\ntimeout_ms = 50\non_backend_error = "${policy}"\n`,
  });
  const open = await startRolter({ config: config('open'), env: { K_A: 'sk-a' } });
  t.after(() => open.stop());
  const closed = await startRolter({ config: config('closed'), env: { K_A: 'sk-a' } });
  t.after(() => closed.stop());
  // Enforced while Redis is up (both nodes count in it: 3 in all).
  const before = await Promise.all([open, closed, open, closed, open].map((g) => ask(g.url, 'sk-a')));
  assert.equal(count(before, 200), 3, before.map((r) => r.status).join());

  await redis.stop({ keepDir: true });
  const whileDown = [];
  for (let i = 0; i < 5; ++i) {
    const started = Date.now();
    whileDown.push({ open: await ask(open.url, 'sk-a'), closed: await ask(closed.url, 'sk-a'), ms: Date.now() - started });
  }
  for (const r of whileDown) {
    assert.equal(r.open.status, 200, r.open.text);
    assert.equal(r.closed.status, 503, r.closed.text);
    assert.equal(r.closed.json.error.code, 'limits_unavailable');
    assert.ok(r.ms < 5000, `two requests took ${r.ms} ms with Redis down`);
  }
  const metrics = await scrapeMetrics(open);
  assert.ok(limitValue(metrics, 'rolter_limit_refusals_total', 'backend_open') >= 5);
  assert.ok(limitValue(await scrapeMetrics(closed), 'rolter_limit_refusals_total', 'unavailable') >= 5);

  // Redis comes back at the same address: enforcement resumes without restarting rolter.
  const again = await startRedis({ dir: redis.dir });
  t.after(() => again.stop());
  await waitUntil(async () => (await ask(closed.url, 'sk-a')).status !== 503,
    { timeoutMs: 15000, intervalMs: 200, what: 'the closed node to reach Redis again' });
  // Each node reconnects on its own schedule: the open node has too once a request it admits is
  // no longer counted as admitted with the backend away.
  await waitUntil(async () => {
    const admittedOpen = limitValue(await scrapeMetrics(open), 'rolter_limit_refusals_total', 'backend_open');
    await ask(open.url, 'sk-a');
    return limitValue(await scrapeMetrics(open), 'rolter_limit_refusals_total', 'backend_open') === admittedOpen;
  }, { timeoutMs: 15000, intervalMs: 200, what: 'the open node to reach Redis again' });
  const after = await Promise.all(Array.from({ length: 6 }, () => ask(open.url, 'sk-a')));
  assert.ok(count(after, 429) > 0, `no refusal after the restart: ${after.map((r) => r.status).join()}`);
  assert.ok(Number(redisCli(again, 'DBSIZE')) > 0, 'nothing was counted in the new Redis');
});

test('a Redis that accepts but never answers costs each request at most the timeout', { timeout: 60000 }, async (t) => {
  const sockets = new Set();
  const silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const sim = await startSimFor(t, { args: ['--time-scale', '0'] });
  const rolter = await startRolter({
    config: fleetConfig(sim.engines, {
      keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\nrpm = 600\n',
      extra: `[limits]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:${silent.address().port}"\ntimeout_ms = 100\n`,
    }),
    env: { K_A: 'sk-a' },
  });
  t.after(() => rolter.stop());
  const times = [];
  for (let i = 0; i < 5; ++i) {
    const started = Date.now();
    const r = await ask(rolter.url, 'sk-a');
    times.push(Date.now() - started);
    assert.equal(r.status, 200, r.text);
  }
  // 100 ms per request at most from Redis, and a generous allowance for the machine.
  assert.ok(Math.max(...times) < 2000, `request times ${times.join(', ')} ms`);
  t.diagnostic(`request times with a silent Redis: ${times.join(', ')} ms`);
});

test('usage records add up to the engine\'s own token counts, one store write per node and flush', { timeout: 180000 }, async (t) => {
  const sim = await startSimFor(t, { args: ['--time-scale', '0'] });
  const keys = [0, 1, 2, 3, 4].map((i) => `[[keys]]\nname = "k${i}"\nkey_env = "K_${i}"\n${i % 2 ? 'team = "t"\n' : ''}`).join('');
  const config = `
[usage]
flush_secs = 1
[[teams]]
name = "t"
${fleetToml(sim.engines[0].url)}
${keys}`;
  const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE, K_0: 'sk-0', K_1: 'sk-1', K_2: 'sk-2', K_3: 'sk-3', K_4: 'sk-4' };
  const cp = await startControlPlane({ config, env });
  t.after(() => cp.stop());
  const nodes = [await startGateway({ controlPlane: cp.url, nodeId: 'u-0', env }),
    await startGateway({ controlPlane: cp.url, nodeId: 'u-1', env })];
  t.after(() => Promise.all(nodes.map((g) => g.stop())));
  const api = adminClient(cp.url, ADMIN);
  await sim.reset(0);
  const writesBefore = (await api.get('/usage/stats')).body.store_writes;
  const started = Date.now();
  for (let batch = 0; batch < 2000; batch += 50) {
    const rs = await Promise.all(Array.from({ length: 50 }, (_, j) => {
      const i = batch + j;
      return ask(nodes[i % 2].url, `sk-${i % 5}`, { maxTokens: 1 + (i % 7), content: `request ${i} ${'w '.repeat(i % 13)}` });
    }));
    assert.equal(count(rs, 200), 50);
  }
  const stats = await sim.stats(0);
  assert.equal(stats.requests, 2000);
  const expected = { input: stats.usage.prompt_tokens, output: stats.usage.completion_tokens };
  const totals = await waitUntil(async () => {
    const r = await api.get('/usage?group_by=key');
    const tot = r.body.totals;
    return tot.requests === 2000 && tot.input_tokens === expected.input && tot.output_tokens === expected.output ? r.body : null;
  }, { timeoutMs: 15000, intervalMs: 250, what: 'the usage records to reach the engine\'s counts' });
  const elapsedS = (Date.now() - started) / 1000;
  assert.equal(totals.data.length, 5);
  for (const row of totals.data) assert.equal(row.requests, 400, JSON.stringify(row));
  assert.equal(totals.totals.estimated, 0);
  const byTeam = (await api.get('/usage?group_by=team')).body.data;
  assert.equal(byTeam.find((r) => r.team === 't').requests, 800);
  const writes = (await api.get('/usage/stats')).body.store_writes - writesBefore;
  // At most one write per node per flush interval (1 s), and at least one.
  assert.ok(writes >= 1 && writes <= 2 * (Math.ceil(elapsedS) + 2), `${writes} writes in ${elapsedS} s`);
  t.diagnostic(`2,000 requests over 2 nodes in ${elapsedS.toFixed(1)} s; ${writes} store writes`);
});

test('limits and budgets set through the API apply on a gateway node, and are audited', { timeout: 120000 }, async (t) => {
  const sim = await startSimFor(t, { args: ['--time-scale', '0'] });
  const config = `
${fleetToml(sim.engines[0].url)}
[metrics]
per_key = true
`;
  const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE };
  const cp = await startControlPlane({ config, env });
  t.after(() => cp.stop());
  const api = adminClient(cp.url, ADMIN);
  const gw = await startGateway({ controlPlane: cp.url, nodeId: 'api-node', env });
  t.after(() => gw.stop());

  const team = await api.post('/teams', { name: 'ops', rpm: 120, burst: 2 });
  assert.equal(team.status, 201, JSON.stringify(team.body));
  // A team that does not exist is refused at its field.
  const orphan = await api.post('/keys', { name: 'orphan', team: 'nobody' });
  assert.equal(orphan.status, 400);
  assert.match(orphan.body.error.message, /no \[\[teams\]\] named "nobody"/);
  const created = await api.post('/keys', { name: 'svc', team: 'ops' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const key = created.body.key;
  await waitUntil(async () => (await ask(gw.url, key)).status !== 401,
    { timeoutMs: 5000, what: 'the gateway to take the new key' });
  // The team's burst of 2 was partly used by the wait above; what is left runs out at once.
  const burst = await Promise.all(Array.from({ length: 4 }, () => ask(gw.url, key)));
  const refused = burst.filter((r) => r.status === 429);
  assert.ok(refused.length >= 2, burst.map((r) => r.status).join());
  assert.match(refused[0].json.error.message, /team 'ops': 120 requests per minute/);

  // A wider burst through the API: the same counters, the new values.
  const widened = await api.put('/teams/ops', { name: 'ops', rpm: 6000, burst: 1000 });
  assert.equal(widened.status, 200, JSON.stringify(widened.body));
  await waitUntil(async () => (await ask(gw.url, key)).status === 200,
    { timeoutMs: 5000, what: 'the wider burst to apply' });
  assert.equal(count(await Promise.all(Array.from({ length: 5 }, () => ask(gw.url, key))), 200), 5);

  const audit = await api.get('/audit?q=team/ops');
  assert.deepEqual(audit.body.data.map((a) => a.action), ['team.update', 'team.create']);
  assert.match(JSON.stringify(audit.body.data[0].after), /"burst":1000/);
  // [metrics] per_key: the key's own series.
  const metrics = await scrapeMetrics(gw, key);
  assert.match(metrics, /rolter_key_requests_total\{key="svc",team="ops"\} \d+/);
});

test('a Redis that requires a password: AUTH from redis_password_file, and a wrong one is a backend error', { timeout: 60000 }, async (t) => {
  const redis = await startRedis({ password: 'redis-secret-0123' });
  t.after(() => redis.stop());
  const sim = await startSimFor(t, { args: ['--time-scale', '0'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rolter-redis-pw-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'right'), 'redis-secret-0123\n');
  fs.writeFileSync(path.join(dir, 'wrong'), 'not-the-password\n');
  const node = async (file) => {
    const rolter = await startRolter({
      config: fleetConfig(sim.engines, {
        keys: '[[keys]]\nname = "a"\nkey_env = "K_A"\nrpm = 600\nburst = 2\n',
        extra: `[limits]\nbackend = "redis"\nredis_url = "${redis.url}"\nredis_password_file = "${path.join(dir, file)}"\non_backend_error = "closed"\n`,
      }),
      env: { K_A: 'sk-a' },
    });
    t.after(() => rolter.stop());
    return rolter;
  };
  const right = await node('right');
  const wrong = await node('wrong');
  const answers = await Promise.all(Array.from({ length: 4 }, () => ask(right.url, 'sk-a')));
  assert.equal(count(answers, 200), 2, answers.map((r) => r.status).join());
  assert.equal(count(answers, 429), 2);
  const refused = await ask(wrong.url, 'sk-a');
  assert.equal(refused.status, 503, refused.text);
  assert.equal(refused.json.error.code, 'limits_unavailable');
  // The operator is told why, once.
  await waitUntil(() => /redis unix:\/\/\S+: cannot connect: .*(WRONGPASS|invalid|password)/i.test(wrong.log.text),
    { timeoutMs: 5000, what: 'the node to log the refused AUTH' });
});
