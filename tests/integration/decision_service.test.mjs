// Policy mode's request-path inputs (SPEC §7), against real processes: the decision service
// (rolter-sim's POST /v1/systemone) chooses a model for each request, a broken decision service
// only costs the vote, and session_affinity's key chain (headers first; a body field only on
// /responses and /messages) keeps a session on one instance.
//
// The fleet: engines 0-1 serve qwen3-0.6b, engines 2-3 serve qwen3-32b (rolter-sim echoes any
// model name), engine 4 is the decision service. One policy route "qwen3" with session_affinity
// (weight 100: a session key outweighs everything else), least_inflight (1) and decision_service
// (10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet } from '../lib/rolter.mjs';
import { chat, postJson, settle } from '../lib/http.mjs';
import { scrapeMetrics } from '../lib/metrics.mjs';
import { startSimFor } from '../lib/sim.mjs';

const kSmall = 'qwen3-0.6b';
const kLarge = 'qwen3-32b';
const kDecider = 4;
const kHard = 'Prove that there are infinitely many primes, then write code that implements ' +
  'the sieve algorithm and derive its complexity step by step.';

const policyConfig = (engines) => {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n';
  for (let i = 0; i < kDecider; i++) {
    toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${engines[i].url}"\n`;
  }
  toml += `[[providers]]\nname = "decider"\nkind = "decision_service"\nbase_url = "${engines[kDecider].url}"\n`;
  toml += '[[routes]]\nname = "qwen3"\nstrategy = "policy"\n';
  for (let i = 0; i < kDecider; i++) {
    toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "${i < 2 ? kSmall : kLarge}"\n`;
  }
  toml += `[routes.policy.session_affinity]
weight = 100
[routes.policy.least_inflight]
weight = 1
[routes.policy.decision_service]
weight = 10
provider = "decider"
model = "jev-latest"
instructions = "Pick the smallest model that can handle the request well."
criteria = { "${kSmall}" = "fast, simple requests", "${kLarge}" = "reasoning, math, code" }
`;
  return toml;
};


const startPolicyFleet = (t) => startFleet(t, { engines: kDecider + 1, config: policyConfig });

// rolter_decision_service_requests_total for route qwen3 and `outcome`; 0 when absent.
async function decisions(rolter, outcome) {
  const text = await scrapeMetrics(rolter);
  const m = text.match(new RegExp(
    `^rolter_decision_service_requests_total\\{outcome="${outcome}",route="qwen3"\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

const modelOf = (target) => target?.split('/').slice(1).join('/');

async function systemoneCalls(sim) {
  const stats = await sim.stats(kDecider);
  return stats.by_path?.['/v1/systemone'] ?? 0;
}

// A /v1/responses request through the gateway, read whole.
async function responses(rolter, body, headers = {}) {
  return settle(await postJson(`${rolter.url}/v1/responses`, { model: 'qwen3', ...body }, { headers }));
}

// A session key (tried as a session-id header) whose instance serves `model`: the first of
// key-0, key-1, ... that lands there. Rendezvous hashing is deterministic, so this is too.
async function keyLandingOn(rolter, model) {
  for (let i = 0; i < 64; i++) {
    const key = `key-${i}`;
    const r = await chat(rolter.url, 'qwen3', { headers: { 'session-id': key } });
    assert.equal(r.status, 200, r.text);
    if (modelOf(r.target) === model) return { key, target: r.target };
  }
  throw new Error(`no session key among 64 lands on ${model}`);
}

test('a greeting goes to the small model, a proof with code to the large one', async (t) => {
  const { sim, rolter } = await startPolicyFleet(t);
  for (let i = 0; i < 3; i++) {
    const easy = await chat(rolter.url, 'qwen3', { content: 'hello there!' });
    assert.equal(easy.status, 200, easy.text);
    assert.equal(modelOf(easy.target), kSmall, `greeting routed to ${easy.target}`);
    const hard = await chat(rolter.url, 'qwen3', { content: kHard });
    assert.equal(hard.status, 200, hard.text);
    assert.equal(modelOf(hard.target), kLarge, `hard request routed to ${hard.target}`);
  }
  assert.equal(await systemoneCalls(sim), 6, 'one decision per request');
  assert.equal(await decisions(rolter, 'ok'), 6);
});

test('embeddings do not ask the decision service', async (t) => {
  const { sim, rolter } = await startPolicyFleet(t);
  const r = await settle(await postJson(`${rolter.url}/v1/embeddings`, { model: 'qwen3', input: 'hi' }));
  assert.equal(r.status, 200, r.text);
  assert.equal(await systemoneCalls(sim), 0);
  assert.equal(await decisions(rolter, 'ok'), 0);
});

test('a route whose targets serve one model never asks the decision service', async (t) => {
  // The same fleet, every target on the large model: there is nothing to choose (SPEC §7).
  const oneModel = (engines) => policyConfig(engines)
    .replaceAll(`model = "${kSmall}"`, `model = "${kLarge}"`)
    .replace(`"${kSmall}" = "fast, simple requests", `, '');
  const { sim, rolter } = await startFleet(t, { engines: kDecider + 1, config: oneModel });
  for (const content of ['hello', kHard]) {
    const r = await chat(rolter.url, 'qwen3', { content });
    assert.equal(r.status, 200, r.text);
    assert.equal(modelOf(r.target), kLarge);
  }
  assert.equal(await systemoneCalls(sim), 0);
  assert.equal(await decisions(rolter, 'ok'), 0);
});

for (const [name, fault, outcome] of [
  ['answers 500', { decision_status: 500 }, 'status'],
  ['answers garbage', { decision_garbage: true }, 'invalid'],
  ['stalls past the 3 s deadline', { decision_stall_ms: 4500 }, 'timeout'],
]) {
  test(`a decision service that ${name} costs the vote, not the request`, async (t) => {
    const { sim, rolter } = await startPolicyFleet(t);
    await sim.setFault(kDecider, fault);
    const r = await chat(rolter.url, 'qwen3', { content: kHard, timeoutMs: 15000 });
    assert.equal(r.status, 200, r.text);
    assert.match(r.target, /^engine-[0-3]\//, 'routed without a vote');
    assert.equal(await decisions(rolter, outcome), 1);
    assert.equal(await decisions(rolter, 'ok'), 0);
  });
}

test('the same session-id header keeps landing on one instance', async (t) => {
  // One worker: verdicts are cached per worker, so the count of decisions below is exact.
  const { sim, rolter } = await startFleet(t, { engines: kDecider + 1, config: policyConfig, workers: 1 });
  for (const key of ['alpha', 'beta', 'gamma']) {
    const targets = new Set();
    for (let i = 0; i < 4; i++) {
      // Easy and hard alike: the session outweighs the decision.
      const content = i % 2 === 0 ? 'hello' : kHard;
      const r = await chat(rolter.url, 'qwen3', { content, headers: { 'session-id': key } });
      assert.equal(r.status, 200, r.text);
      targets.add(r.target);
    }
    assert.equal(targets.size, 1, `session ${key} went to ${[...targets]}`);
  }
  assert.equal(await systemoneCalls(sim), 3, "a session's verdict is reused for 60 s");
  // A key the chain reads later (x-client-request-id) works too, and session-id wins over it.
  const { key, target } = await keyLandingOn(rolter, kLarge);
  const byRequestId = await chat(rolter.url, 'qwen3', { headers: { 'x-client-request-id': key } });
  assert.equal(byRequestId.target, target);
});

test('prompt_cache_key is a session key on /v1/responses, not on chat completions', async (t) => {
  const { rolter } = await startPolicyFleet(t);
  // A key whose instance serves the large model: an easy request there shows the key decided.
  const { key, target } = await keyLandingOn(rolter, kLarge);
  for (let i = 0; i < 3; i++) {
    const r = await responses(rolter, { input: 'hello', prompt_cache_key: key, max_output_tokens: 1 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.target, target, 'the body key on /v1/responses keeps the session');
  }
  // A number is no key: the greeting goes where the decision sends it.
  const numeric = await responses(rolter, { input: 'hello', prompt_cache_key: 7, max_output_tokens: 1 });
  assert.equal(numeric.status, 200, numeric.text);
  assert.equal(modelOf(numeric.target), kSmall);
  // On chat completions the same field is not read: the greeting goes to the small model.
  for (let i = 0; i < 3; i++) {
    const r = await chat(rolter.url, 'qwen3', { content: 'hello', body: { prompt_cache_key: key } });
    assert.equal(r.status, 200, r.text);
    assert.equal(modelOf(r.target), kSmall, `chat with prompt_cache_key routed to ${r.target}`);
  }
});

// The simulated decision service alone (runs without the policy balancer).
test('rolter-sim answers POST /v1/systemone, and its decision faults switch at run time', async (t) => {
  const sim = await startSimFor(t, { engines: 1, args: ['--time-scale', '0'] });
  const url = `${sim.engines[0].url}/v1/systemone`;
  const ask = async (content) => settle(await postJson(url, {
    state: { model: 'qwen3', messages: [{ role: 'user', content }] },
    model: 'jev-latest',
    questions: { model_selection: { type: 'choice', instructions: 'pick', criteria: { [kSmall]: null, [kLarge]: null } } },
  }));
  const easy = await ask('hello');
  assert.equal(easy.status, 200, easy.text);
  assert.equal(easy.json.answers.model_selection.choice, kSmall);
  const hard = await ask(kHard);
  assert.equal(hard.json.answers.model_selection.choice, kLarge);
  const { probabilities, confidence } = hard.json.answers.model_selection;
  assert.ok(Math.abs(probabilities[kSmall] + probabilities[kLarge] - 1) < 1e-9);
  assert.ok(confidence > 0 && confidence <= 1);

  await sim.setFault(0, { decision_status: 503 });
  assert.equal((await ask('hello')).status, 503);
  await sim.setFault(0, { decision_garbage: true });
  const garbage = await ask('hello');
  assert.equal(garbage.status, 200);
  assert.equal(garbage.json, undefined, 'not JSON');
  await sim.clearFault(0);
  assert.equal((await ask('hello')).status, 200);
  const inference = await chat(sim.engines[0].url, 'qwen3');
  assert.equal(inference.status, 200, 'the decision faults leave inference alone');
});
