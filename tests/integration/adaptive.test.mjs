// The adaptive strategy (SPEC §6.10) against a real rolter-sim fleet: warm-up probes are capped
// at 8 per target even when a target never answers well; once engaged, the latency blend moves
// traffic off an engine made 5x slower while an exploration share keeps reaching it; switching
// the policy off by a reload restores the pipeline stack at the next pick; and the telemetry
// sender posts its samples to the control plane every 15 s with the node's credentials.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { configFor, startFleet } from '../lib/rolter.mjs';
import { chat, waitUntil, withDeadline } from '../lib/http.mjs';
import { promtool, scrapeMetrics } from '../lib/metrics.mjs';

const kTargets = ['engine-0/sim-model', 'engine-1/sim-model'];

// rolter.toml for one adaptive route "m" over every engine, with the [adaptive_routing] table.
function adaptiveConfig(engines, policy = {}, tables = {}) {
  const p = {
    enabled: true, latency_weight: 1, cost_weight: 0, load_weight: 0, exploration_ratio: 0.2,
    min_samples: 20, ...policy,
  };
  const lines = Object.entries(p).map(([k, v]) => `${k} = ${v}`).join('\n');
  return configFor({
    engines,
    routes: [{
      name: 'm', strategy: 'adaptive',
      targets: engines.map((_, i) => ({ engine: i, model: 'sim-model' })),
    }],
    ...tables,
    extra: `[adaptive_routing]\n${lines}\n`,
  });
}

// The sum of a metric's series whose labels include `labels`.
function sumOf(text, metric, labels = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = line.match(/^(\w+)\{(.*)\} (\S+)$/);
    if (!m || m[1] !== metric) continue;
    const have = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

// The route's picks from /metrics, by target and decision.
async function picks(rolter) {
  const text = await scrapeMetrics(rolter);
  const out = {};
  for (const target of kTargets) {
    out[target] = {};
    for (const decision of ['blend', 'exploration', 'probe', 'fallback']) {
      out[target][decision] = sumOf(text, 'rolter_adaptive_routing_target_picks_total',
        { route: 'm', target, decision });
    }
  }
  return out;
}

// Distinct prompts, so the fallback's prefix affinity has nothing to hold on to.
function prompt(i) {
  return `${((i + 1) * 2654435761 % 4294967296).toString(16)} question ${i}`;
}

// Prompts whose first byte is unique and occurs in no prompt(i): each is new to the cache_aware
// trie, so the default stack's prefix affinity scores every engine alike and the tie is random.
const kFreshFirstBytes = 'GHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwxyz!#$%&()*+,-./:;<=>?@[]^_{|}~';
function freshPrompt(i) {
  return `${kFreshFirstBytes[i]} question ${i}`;
}

// Sends `n` chat requests one after another; returns the target of each.
async function send(rolter, n, from = 0, promptOf = prompt) {
  const targets = [];
  for (let i = 0; i < n; i++) {
    const r = await chat(rolter.url, 'm', { content: promptOf(from + i) });
    assert.equal(r.status, 200, r.text);
    targets.push(r.target);
  }
  return targets;
}

test('a target that never answers well gets at most 8 warm-up probes, then the fallback has it', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    // min_samples out of reach: the blend never engages, so every pick is a probe or the fallback.
    // A breaker that never opens keeps the failing engine eligible throughout.
    config: (engines) => adaptiveConfig(engines, { min_samples: 100000 },
      { breaker: { failure_threshold: 100000 } }),
  });
  // Every answer from engine 1 is a 500: it never gives the gateway a latency sample.
  await sim.setFault(1, { error_rate: 1, error_status: 500 });
  const targets = await send(rolter, 60);
  assert.ok(targets.every((target) => target === kTargets[0]), targets.join(' '));

  const p = await picks(rolter);
  assert.equal(p[kTargets[1]].probe, 8, JSON.stringify(p));
  assert.ok(p[kTargets[0]].probe <= 8, JSON.stringify(p));
  // Left to the fallback after its probes, which still tries it now and then.
  assert.ok(p[kTargets[1]].fallback > 0, JSON.stringify(p));
  assert.equal(p[kTargets[1]].blend + p[kTargets[1]].exploration, 0);
  // Every pick of engine 1 reached it, and nothing else did.
  const stats = await sim.stats(1);
  assert.equal(stats.requests, p[kTargets[1]].probe + p[kTargets[1]].fallback);
});

test('engaged, the blend leaves a 5x slower engine but keeps exploring it; a reload that turns the policy off restores the pipeline stack at once', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 2,
    simArgs: ['--time-scale', '1', '--ttft-ms', '20', '--token-ms', '1'],
    config: (engines) => adaptiveConfig(engines),
  });
  // Warm-up and engagement: 20 requests served, both engines sampled.
  await send(rolter, 40);
  const warm = await picks(rolter);
  assert.ok(warm[kTargets[0]].blend + warm[kTargets[1]].blend > 0, JSON.stringify(warm));

  await sim.setFault(1, { slowdown: 5 });
  const slowed = await send(rolter, 300, 1000);
  const after = await picks(rolter);
  const delta = (target, decision) => after[target][decision] - warm[target][decision];
  const lastShare = slowed.slice(100).filter((target) => target === kTargets[1]).length / 200;
  // SPEC §6.10: the slow engine keeps only what exploration gives it: about ratio / 2 = 10%.
  assert.ok(lastShare < 0.25, `the slow engine still took ${lastShare} of the last 200 picks`);
  assert.ok(delta(kTargets[1], 'exploration') > 0, JSON.stringify(after));
  const explored = delta(kTargets[0], 'exploration') + delta(kTargets[1], 'exploration');
  assert.ok(explored > 300 * 0.1 && explored < 300 * 0.3, `explored ${explored} of 300`);
  t.diagnostic(`slow engine share of the last 200 picks: ${lastShare}; explored ${explored} of 300`);

  // Policy off by reload: every next pick is the pipeline stack's. Two idle engines, no session,
  // and prompts the prefix trie has never seen (the hex prompts above taught it mostly engine 0):
  // an even split again, slow engine or not.
  const mark = rolter.log.text.length;
  rolter.writeConfig(adaptiveConfig(sim.engines, { enabled: false }));
  await rolter.log.waitFor(/config reloaded \(file changed\): version 2/, { from: mark });
  const before = await picks(rolter);
  const kOff = 60;
  assert.ok(kFreshFirstBytes.length >= kOff);
  const off = await send(rolter, kOff, 0, freshPrompt);
  const end = await picks(rolter);
  const offDelta = (target, decision) => end[target][decision] - before[target][decision];
  for (const target of kTargets) {
    assert.equal(offDelta(target, 'blend') + offDelta(target, 'exploration') + offDelta(target, 'probe'), 0);
  }
  assert.equal(offDelta(kTargets[0], 'fallback') + offDelta(kTargets[1], 'fallback'), kOff);
  const offShare = off.filter((target) => target === kTargets[1]).length / kOff;
  assert.ok(offShare >= 0.25 && offShare <= 0.75, `the slow engine took ${offShare} with the policy off`);
  t.diagnostic(`slow engine share with the policy off: ${offShare}`);
});

test('the telemetry sender posts every adaptive route to the control plane with the node credentials', async (t) => {
  const posts = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      posts.push({ at: Date.now(), method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => receiver.close(resolve)));
  const controlPlane = `http://127.0.0.1:${receiver.address().port}`;

  const started = Date.now();
  const { rolter } = await startFleet(t, {
    engines: 2,
    config: (engines) => adaptiveConfig(engines, { min_samples: 5 }),
    args: ['--control-plane', controlPlane, '--node-id', 'node-test-1'],
    env: { ROLTER_NODE_TOKEN: 'node-secret' },
  });
  await send(rolter, 30);
  // The product's period is 15 s: the first post comes 15 s after the start. (The node's usage
  // records go to the same control plane, on their own path.)
  const telemetry = () => posts.filter((p) => p.url === '/internal/adaptive-telemetry');
  await waitUntil(() => telemetry().length > 0, { timeoutMs: 20000, intervalMs: 100, what: 'a telemetry post' });
  const post = telemetry()[0];
  for (const usage of posts.filter((p) => p.url !== '/internal/adaptive-telemetry')) {
    assert.equal(usage.url, '/internal/v1/usage');
    assert.equal(usage.headers.authorization, 'Bearer node-secret');
  }
  t.diagnostic(`first post ${post.at - started} ms after the start`);
  assert.equal(post.method, 'POST');
  assert.equal(post.url, '/internal/adaptive-telemetry');
  assert.equal(post.headers.authorization, 'Bearer node-secret');
  assert.equal(post.headers['x-rolter-node-id'], 'node-test-1');
  const doc = JSON.parse(post.body);
  assert.equal(doc.node_id, 'node-test-1');
  assert.equal(doc.routes.length, 1);
  const route = doc.routes[0];
  assert.equal(route.route, 'm');
  assert.equal(route.engaged, true);
  assert.equal(route.served, 30);
  assert.deepEqual(route.targets.map((x) => x.target).sort(), kTargets);
  const split = route.decisions;
  assert.equal(split.blend + split.exploration + split.probe + split.fallback, 30);
  assert.ok(split.probe >= 1 && split.probe <= 16, JSON.stringify(split));
  assert.equal(route.policy.enabled, true);
  assert.equal(route.policy.exploration_ratio, 0.2);
  assert.equal(route.targets.reduce((n, x) => n + x.picks, 0), 30);
  for (const target of route.targets) {
    assert.equal(typeof target.score, 'number');
    assert.equal(typeof target.components.latency, 'number');
    assert.ok(target.signals.latency_ms > 0, JSON.stringify(target));
    assert.equal(target.signals.price, null);
    assert.equal(target.signals.in_flight, 0);
  }
  // The same tick set the score gauges and counted the post.
  const text = await scrapeMetrics(rolter);
  for (const target of kTargets) {
    assert.match(text, new RegExp(`^rolter_adaptive_routing_target_score\\{route="m",target="${target}"\\} `, 'm'));
  }
  assert.ok(sumOf(text, 'rolter_adaptive_telemetry_posts_total', { result: 'ok' }) >= 1);
  const lint = await promtool(t, text);
  assert.equal(lint.code, 0, lint.out);
});
