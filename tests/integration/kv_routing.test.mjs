// Exact KV-cache routing against a real rolter-sim fleet that publishes vLLM KV events over
// ZeroMQ: precise_cache_aware sends a prompt to the engine whose published blocks hold its prefix,
// stops preferring it once the engine reports the blocks gone, repairs a dropped stretch of the
// stream through the replay socket, and routes plain chat requests the same way when the gateway
// asks the engine for their token ids (tokenize = "engine").
//
// Every step waits on what the gateway itself reports (its /metrics: stream state and event
// counts), never on time alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet } from '../lib/rolter.mjs';
import { postJson, settle, waitUntil } from '../lib/http.mjs';
import { endpointState, endpointValue, promtool, scrapeMetrics } from '../lib/metrics.mjs';

const kEngines = 3;
const kBlockSize = 16;
const kHolder = 1;  // the engine the tests warm: "B"

// rolter.toml for the sim's engines, each a provider with its KV-event stream.
function kvConfig(engines, { strategy = 'precise_cache_aware', replay = true, providerExtra = '' } = {}) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n';
  engines.forEach((e, i) => {
    toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${e.url}"\n${providerExtra}`;
    toml += `[providers.kv_events]\nendpoint = "tcp://127.0.0.1:${e.kv_port}"\n`;
    if (replay) toml += `replay_endpoint = "tcp://127.0.0.1:${e.kv_replay_port}"\n`;
    toml += `block_size = ${kBlockSize}\n`;
  });
  toml += `[[routes]]\nname = "m"\nstrategy = "${strategy}"\n`;
  engines.forEach((_, i) => { toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "sim-model"\n`; });
  return toml;
}

function kvFleet(t, { format = 'array', replay = true, kvBlocks = 4096, config = {} } = {}) {
  const simArgs = ['--time-scale', '0', '--kv-port', '0', '--kv-format', format,
    '--block-size', String(kBlockSize), '--kv-blocks', String(kvBlocks)];
  if (replay) simArgs.push('--kv-replay');
  return startFleet(t, { engines: kEngines, simArgs, config: (engines) => kvConfig(engines, { replay, ...config }) });
}

// A prompt of token ids: `blocks` full blocks from `seed`, plus a few tokens of its own.
function tokens(seed, blocks, tail = 5) {
  return Array.from({ length: blocks * kBlockSize + tail }, (_, i) => seed * 100000 + i);
}

// A completion with a token-array prompt, straight to engine i (as if from outside the gateway).
async function warmDirectly(sim, i, prompt) {
  const res = await settle(await postJson(`${sim.engines[i].url}/v1/completions`,
    { model: 'sim-model', prompt, max_tokens: 1 }));
  assert.equal(res.status, 200, res.text);
}

async function viaGateway(rolter, prompt) {
  const res = await settle(await postJson(`${rolter.url}/v1/completions`,
    { model: 'm', prompt, max_tokens: 1 }, { headers: { 'x-rolter-explain': '1' } }));
  assert.equal(res.status, 200, res.text);
  return { target: res.target, decision: JSON.parse(res.headers.get('x-rolter-decision')) };
}

const metric = async (rolter, name, i) => endpointValue(await scrapeMetrics(rolter), name, `engine-${i}`);
const streamState = async (rolter, i) => endpointState(await scrapeMetrics(rolter), 'rolter_kv_events_state', `engine-${i}`);

// Waits until the gateway has applied at least `n` KV-event batches from engine i, live.
async function eventsApplied(rolter, i, n) {
  await waitUntil(async () => (await metric(rolter, 'rolter_kv_events_total', i) ?? 0) >= n &&
    await streamState(rolter, i) === 'live',
  { timeoutMs: 10000, what: `engine-${i}'s stream live with ${n} batches applied` });
}
const eventsSoFar = async (rolter, i) => (await metric(rolter, 'rolter_kv_events_total', i)) ?? 0;

// The KV score the decision shows for engine i.
const kvScore = (decision, i) =>
  decision.candidates.find((c) => c.target === `engine-${i}/sim-model`).scores.kv_residency ?? 0;

for (const format of ['array', 'map']) {
  test(`precise_cache_aware follows the engine's KV events (${format} encoding)`, async (t) => {
    const { sim, rolter } = await kvFleet(t, { format });
    const prefix = tokens(1, 8, 0);
    const before = await eventsSoFar(rolter, kHolder);
    await warmDirectly(sim, kHolder, prefix);
    await eventsApplied(rolter, kHolder, before + 1);

    // Five different requests sharing B's 8 blocks: each goes to B, scored by its blocks alone.
    for (let k = 0; k < 5; k++) {
      const prompt = [...prefix, ...tokens(50 + k, 2)];
      const { target, decision } = await viaGateway(rolter, prompt);
      assert.equal(target, `engine-${kHolder}/sim-model`, JSON.stringify(decision));
      assert.equal(decision.strategy, 'precise_cache_aware');
      assert.ok(kvScore(decision, kHolder) >= 0.79, JSON.stringify(decision));  // 8 of 10 blocks, weighted 1.0
      for (const i of [0, 2]) assert.equal(kvScore(decision, i), 0);
    }

    // vLLM's POST /reset_prefix_cache: B publishes AllBlocksCleared, and its score drops to 0.
    const cleared = await eventsSoFar(rolter, kHolder);
    const reset = await settle(await postJson(`${sim.engines[kHolder].url}/reset_prefix_cache`, {}));
    assert.equal(reset.status, 200, reset.text);
    await eventsApplied(rolter, kHolder, cleared + 1);
    const after = await viaGateway(rolter, [...prefix, ...tokens(60, 2)]);
    for (let i = 0; i < kEngines; i++) {
      // The request just routed may have stored its blocks anywhere; what matters is that B's
      // index no longer claims the old prefix, so its score is 0 like everyone else's.
      assert.equal(kvScore(after.decision, i), 0, JSON.stringify(after.decision));
    }

    const text = await scrapeMetrics(rolter);
    assert.equal((await promtool(t, text)).code, 0);
    assert.equal(endpointValue(text, 'rolter_kv_event_decode_errors_total', `engine-${kHolder}`), 0);
  });
}

test('precise_cache_aware stops preferring B once B evicts the prefix (BlockRemoved)', async (t) => {
  // 24 blocks per engine: filling B with 3 other 8-block prompts evicts the first.
  const { sim, rolter } = await kvFleet(t, { kvBlocks: 24 });
  const prefix = tokens(2, 8, 0);
  let seen = await eventsSoFar(rolter, kHolder);
  await warmDirectly(sim, kHolder, prefix);
  await eventsApplied(rolter, kHolder, seen + 1);
  const warm = await viaGateway(rolter, [...prefix, ...tokens(70, 1)]);
  assert.equal(warm.target, `engine-${kHolder}/sim-model`);

  for (const seed of [3, 4, 5]) {
    seen = await eventsSoFar(rolter, kHolder);
    await warmDirectly(sim, kHolder, tokens(seed, 8, 0));
    await eventsApplied(rolter, kHolder, seen + 1);
  }
  const cold = await viaGateway(rolter, [...prefix, ...tokens(71, 1)]);
  assert.equal(kvScore(cold.decision, kHolder), 0, JSON.stringify(cold.decision));
});

for (const replay of [true, false]) {
  test(`a stretch of B's stream the gateway missed is ${replay ? 'repaired through replay' : 'cleared and rebuilt'}`, async (t) => {
    const { sim, rolter } = await kvFleet(t, { replay });
    // A first batch, so that the stream is live. rolter subscribes on its first tick, and a
    // batch sent before that is lost to it; an engine publishes nothing for what it has cached,
    // so each try sends a prompt of its own.
    let fresh = 900;
    await waitUntil(async () => (await eventsSoFar(rolter, kHolder)) > 0 &&
      await streamState(rolter, kHolder) === 'live' ||
      (await warmDirectly(sim, kHolder, tokens(fresh++, 1, 0)), false),
    { timeoutMs: 10000, intervalMs: 200, what: `engine-${kHolder}'s first batch applied` });
    // B goes silent: its batches keep their sequence numbers (and, with replay, stay in its replay
    // buffer) but are not sent.
    await sim.setFault(kHolder, { kv_silent: true });
    const missed = tokens(10, 8, 0);
    await warmDirectly(sim, kHolder, missed);
    await sim.setFault(kHolder, { kv_silent: false });
    // The next batch shows the gap.
    const gapsBefore = (await metric(rolter, 'rolter_kv_event_gaps_total', kHolder)) ?? 0;
    await warmDirectly(sim, kHolder, tokens(11, 8, 0));
    await waitUntil(async () => ((await metric(rolter, 'rolter_kv_event_gaps_total', kHolder)) ?? 0) > gapsBefore &&
      await streamState(rolter, kHolder) === 'live',
    { timeoutMs: 10000, what: 'the gap seen and the stream live again' });

    const missedScore = kvScore((await viaGateway(rolter, [...missed, ...tokens(80, 2)])).decision, kHolder);
    const liveScore = kvScore((await viaGateway(rolter, [...tokens(11, 8, 0), ...tokens(81, 2)])).decision, kHolder);
    assert.ok(liveScore >= 0.79, `blocks published after the gap: score ${liveScore}`);
    if (replay) {
      // The missed blocks came back through the replay socket.
      assert.ok(missedScore >= 0.79, `missed blocks after replay: score ${missedScore}`);
    } else {
      // Without replay the index was cleared at the gap and knows only what came after it.
      assert.equal(missedScore, 0);
    }
  });
}

test('tokenize = "engine": a plain chat request routes by its prefix, through the engine\'s own ids', async (t) => {
  const { sim, rolter } = await kvFleet(t, {
    config: { providerExtra: 'tokenize = "engine"\ntokenize_timeout_ms = 2000\n' },
  });
  const system = { role: 'system', content: Array.from({ length: 300 }, (_, i) => `s${i}`).join(' ') };
  const first = [system, { role: 'user', content: 'first question' }];
  const seen = await eventsSoFar(rolter, kHolder);
  const warm = await settle(await postJson(`${sim.engines[kHolder].url}/v1/chat/completions`,
    { model: 'sim-model', messages: first, max_tokens: 1 }));
  assert.equal(warm.status, 200, warm.text);
  await eventsApplied(rolter, kHolder, seen + 1);

  for (let k = 0; k < 4; k++) {
    const messages = [system, { role: 'user', content: `another question ${k}` }];
    const res = await settle(await postJson(`${rolter.url}/v1/chat/completions`,
      { model: 'm', messages, max_tokens: 1 }, { headers: { 'x-rolter-explain': '1' } }));
    assert.equal(res.status, 200, res.text);
    const decision = JSON.parse(res.headers.get('x-rolter-decision'));
    assert.equal(res.target, `engine-${kHolder}/sim-model`, JSON.stringify(decision));
    assert.ok(kvScore(decision, kHolder) > 0.9, JSON.stringify(decision));
  }
  const text = await scrapeMetrics(rolter);
  assert.match(text, /^rolter_tokenize_seconds_count\{[^}]*outcome="ok"[^}]*\} [1-9]/m);
});
