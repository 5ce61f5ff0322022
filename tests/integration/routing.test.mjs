// Prompt-, adapter- and load-aware routing against a real rolter-sim fleet: cache_aware keeps a
// conversation on one engine and says why (x-rolter-explain), its load guard spreads work away
// from an overloaded warm engine, and lora_aware sends a passthrough group's adapter requests to
// the engine that already holds the adapter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configFor, startFleet } from '../lib/rolter.mjs';
import { postJson, settle, waitUntil, withDeadline } from '../lib/http.mjs';
import { endpointValue, scrapeMetrics } from '../lib/metrics.mjs';

const kEngines = 4;

// Deterministic filler text: distinct per (seed, n), long enough that one turn's prompt is most of
// the next turn's.
function words(seed, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(`w${seed}x${(i * 7919 + seed * 104729) % 100003}`);
  return out.join(' ');
}

// A multi-turn conversation: every call sends the whole history plus one new user message.
class Conversation {
  constructor(seed) {
    this.seed = seed;
    this.messages = [{ role: 'system', content: `You are assistant ${seed}. ${words(seed, 300)}` }];
    this.turns = 0;
  }

  body(model, extra = {}) {
    const user = { role: 'user', content: `Turn ${this.turns}: ${words(this.seed * 100 + this.turns, 60)}` };
    return { model, messages: [...this.messages, user], max_tokens: 1, ...extra };
  }

  // Sends the next turn and appends it (with the answer) to the history.
  async next(baseUrl, model, { explain = true } = {}) {
    const body = this.body(model);
    const res = await settle(await postJson(`${baseUrl}/v1/chat/completions`, body,
      { headers: explain ? { 'x-rolter-explain': '1' } : {} }));
    assert.equal(res.status, 200, res.text);
    this.messages = [...body.messages, { role: 'assistant', content: res.json.choices[0].message.content }];
    this.turns += 1;
    return { ...res, decision: decisionOf(res) };
  }
}

function decisionOf(res) {
  const header = res.headers.get('x-rolter-decision');
  return header ? JSON.parse(header) : undefined;
}

// The gateway's own in-flight count on the instance of `target`'s provider, from its /metrics.
async function inFlight(rolter, target) {
  return endpointValue(await scrapeMetrics(rolter), 'rolter_in_flight', target.split('/')[0]) ?? 0;
}

function cacheAwareFleet(t, simArgs = ['--time-scale', '0']) {
  return startFleet(t, {
    engines: kEngines,
    simArgs,
    config: (engines) => configFor({
      engines,
      routes: [{
        name: 'm', strategy: 'cache_aware',
        targets: engines.map((_, i) => ({ engine: i, model: 'sim-model' })),
      }],
    }),
  });
}

test('cache_aware keeps a multi-turn conversation on one engine, and x-rolter-decision says why', async (t) => {
  const { rolter } = await cacheAwareFleet(t);
  const conversation = new Conversation(1);
  const first = await conversation.next(rolter.url, 'm');
  assert.equal(first.decision.strategy, 'cache_aware');
  assert.equal(first.decision.winner, first.target);
  assert.match(first.decision.reasons.join(' '), /least loaded/);

  for (let turn = 1; turn < 6; turn++) {
    const res = await conversation.next(rolter.url, 'm');
    assert.equal(res.target, first.target, `turn ${turn} moved to ${res.target}`);
    const d = res.decision;
    assert.equal(d.winner, first.target);
    assert.match(d.reasons.join(' '), /keeps affinity/);
    const winner = d.candidates.find((c) => c.target === first.target);
    assert.ok(winner.scores.prefix >= 0.5, `winner's match ${winner.scores.prefix} is under 0.5`);
    for (const c of d.candidates.filter((c) => c.target !== first.target)) {
      assert.ok(c.scores.prefix < winner.scores.prefix, `${c.target} matched as much as the winner`);
    }
  }

  // Without the request header, no decision is computed or sent.
  const quiet = await conversation.next(rolter.url, 'm', { explain: false });
  assert.equal(quiet.target, first.target);
  assert.equal(quiet.headers.get('x-rolter-decision'), null);
});

test('cache_aware spreads away from a warm engine once both parts of the load guard hold', async (t) => {
  // Slow answers, so requests stay in flight while the test probes: 2 s of decoding each.
  const { rolter } = await cacheAwareFleet(t, ['--time-scale', '1', '--token-ms', '20', '--ttft-ms', '1']);
  const conversation = new Conversation(2);
  const warm = (await conversation.next(rolter.url, 'm')).target;

  // Holds a streamed continuation of the conversation open on the warm engine until released.
  const held = [];
  t.after(() => held.forEach((h) => h.controller.abort()));
  const hold = async () => {
    const controller = new AbortController();
    const res = await fetch(`${rolter.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-rolter-explain': '1' },
      body: JSON.stringify(conversation.body('m', { max_tokens: 2000, stream: true })),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    await withDeadline(reader.read(), 10000, 'the first streamed bytes');  // the engine has it
    held.push({ controller, target: res.headers.get('x-rolter-target') });
  };
  // Every step waits until the gateway's count agrees, so no probe races a request's end.
  const settled = (n) => waitUntil(async () => (await inFlight(rolter, warm)) === n,
    { timeoutMs: 10000, what: `${n} requests in flight on ${warm}` });
  const probe = async (conv) => {
    const res = await settle(await postJson(`${rolter.url}/v1/chat/completions`, conv.body('m'),
      { headers: { 'x-rolter-explain': '1' } }));
    assert.equal(res.status, 200, res.text);
    return { target: res.target, decision: decisionOf(res) };
  };

  // Loads 1 and 2 on the warm engine, 0 elsewhere: 2 is not over the mean (0.5) + 2, so affinity
  // holds.
  await hold();
  await hold();
  assert.deepEqual(held.map((h) => h.target), [warm, warm]);
  await settled(2);
  const kept = await probe(conversation);
  assert.equal(kept.target, warm, JSON.stringify(kept.decision));
  assert.equal(kept.decision.candidates.find((c) => c.target === warm).load, 2);

  // A third held request: load 3 > mean 0.75 + 2 and > 1.5 x 0.75: the warm engine is overloaded.
  await settled(2);
  await hold();
  assert.equal(held[2].target, warm);
  await settled(3);
  const spread = await probe(conversation);
  assert.notEqual(spread.target, warm, JSON.stringify(spread.decision));
  assert.match(spread.decision.reasons.join(' '), /overloaded/);
  assert.equal(spread.decision.candidates.find((c) => c.target === spread.target).load, 0);

  // A new conversation goes to an idle engine too.
  const fresh = await probe(new Conversation(3));
  assert.notEqual(fresh.target, warm);
});

test('lora_aware sends a passthrough group adapter to the engine that already holds it', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: kEngines,
    simArgs: ['--time-scale', '0', '--max-loras', '2'],
    config: (engines) => configFor({ engines, routes: [] }) + `
[[provider_groups]]
slug = "fleet"
strategy = "lora_aware"
${engines.map((_, i) => `[[provider_groups.members]]\nprovider = "engine-${i}"\n`).join('')}`,
  });
  const ask = async (model, seed) => {
    const res = await settle(await postJson(`${rolter.url}/v1/chat/completions`, {
      model, messages: [{ role: 'user', content: words(seed, 40) }], max_tokens: 1,
    }, { headers: { 'x-rolter-explain': '1' } }));
    assert.equal(res.status, 200, res.text);
    return { target: res.target, decision: decisionOf(res) };
  };

  const first = await ask('fleet/adapter-x', 1);
  for (let i = 2; i < 10; i++) {
    const res = await ask('fleet/adapter-x', i);  // a different prompt each time
    assert.equal(res.target, first.target, JSON.stringify(res.decision));
    const holder = res.decision.candidates.find((c) => c.target === first.target);
    assert.ok(holder.scores.adapter_residency > 0, JSON.stringify(res.decision));
  }

  // The engines agree: only the chosen one ever loaded adapter-x.
  const stats = await sim.allStats();  // one entry per engine
  const holders = stats.filter((e) => e.model.adapters.includes('adapter-x'));
  assert.equal(holders.length, 1, JSON.stringify(stats.map((e) => e.model.adapters)));
  assert.equal(`engine-${holders[0].engine}/*`, first.target);
  const loads = stats.reduce((sum, e) => sum + e.model.lora_misses, 0);
  assert.equal(loads, 1, 'adapter-x was loaded more than once');
});

test('a group whose members all forward a fixed upstream model names no adapter', async (t) => {
  const { rolter } = await startFleet(t, {
    engines: 2,
    config: (engines) => configFor({ engines, routes: [] }) + `
[[provider_groups]]
slug = "fixed"
strategy = "lora_aware"
[[provider_groups.members]]
provider = "engine-0"
upstream_model = "sim-model"
[[provider_groups.members]]
provider = "engine-1"
upstream_model = "sim-model"
`,
  });
  // With every member on a fixed upstream model, the requested name is no adapter: adapter
  // residency stays neutral (no candidate scores for it) however often the name is sent.
  for (let i = 0; i < 3; i++) {
    const res = await settle(await postJson(`${rolter.url}/v1/chat/completions`, {
      model: 'fixed/anything', messages: [{ role: 'user', content: words(i, 10) }], max_tokens: 1,
    }, { headers: { 'x-rolter-explain': '1' } }));
    assert.equal(res.status, 200, res.text);
    const d = decisionOf(res);
    for (const c of d.candidates) assert.equal(c.scores.adapter_residency, 0, JSON.stringify(d));
  }
});
