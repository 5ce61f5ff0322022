// rolter-sim's engine model seen through HTTP: prefix-cache hits in usage, /occupancy, vLLM
// metrics, LoRA adapters and the KV-event ports in the ready line.
//   ROLTER_BIN_DIR=build-sim/bin node --test tests/sim/
// Each test starts its own simulator (freshSim), so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimFor } from '../lib/sim.mjs';
import { fetchWithin } from '../lib/http.mjs';

// A fresh simulator per test (startSimFor checks its clean exit when the test ends).
const freshSim = (t) => startSimFor(t, {
    engines: 2,
    args: ['--ttft-ms', '1', '--token-ms', '1', '--block-size', '4', '--kv-blocks', '256',
      '--kv-port', '0', '--kv-replay', '--lora-load-ms', '30'],
  });

const url = (sim, i, path) => `${sim.engines[i].url}${path}`;

// Every request has a deadline (fetchWithin).
async function chat(sim, i, body) {
  const response = await fetchWithin(url(sim, i, '/v1/chat/completions'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  return response;
}

const PROMPT = 'you are a careful assistant who answers in short sentences and never guesses '
  + 'what is the capital of france';  // 19 words: 4 full blocks of 4, and 3 more

test('the ready line names each engine\'s KV event and replay ports', async (t) => {
  const sim = await freshSim(t);
  for (const engine of sim.engines) {
    assert.ok(engine.kv_port > 0);
    assert.ok(engine.kv_replay_port > 0);
  }
});

test('a repeated prompt is served from the prefix cache the second time', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'sim-model', max_tokens: 3, messages: [{ role: 'user', content: PROMPT }] };
  const first = await (await chat(sim, 0, body)).json();
  assert.equal(first.usage.prompt_tokens, 19);
  assert.equal(first.usage.prompt_tokens_details.cached_tokens, 0);
  const second = await (await chat(sim, 0, body)).json();
  assert.equal(second.usage.prompt_tokens_details.cached_tokens, 16);

  // Streaming: the usage chunk reports the hit too.
  const streamed = await chat(sim, 0, { ...body, stream: true, stream_options: { include_usage: true } });
  const text = await streamed.text();
  const usage = text.split('\n\n')
    .filter((block) => block.startsWith('data: {'))
    .map((block) => JSON.parse(block.slice(6)))
    .find((chunk) => chunk.usage)?.usage;
  assert.ok(usage, 'no usage chunk');
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0);

  const metrics = await (await fetchWithin(url(sim, 0, '/metrics'))).text();
  const value = (name) => Number(metrics.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm'))[1]);
  assert.equal(value('vllm:prefix_cache_queries_total'), 57);
  assert.equal(value('vllm:prefix_cache_hits_total'), 32);
  assert.equal(value('vllm:num_requests_running'), 0);
});

test('/occupancy reports the share of KV blocks in use', async (t) => {
  const sim = await freshSim(t);
  const response = await fetchWithin(url(sim, 1, '/occupancy'));
  assert.equal(response.status, 200);
  const empty = await response.json();
  assert.deepEqual(empty, { occupancy: 0, cache_available: true });
  await (await chat(sim, 1, { max_tokens: 1, messages: [{ role: 'user', content: PROMPT }] })).json();
  const after = await (await fetchWithin(url(sim, 1, '/occupancy'))).json();
  assert.equal(after.occupancy, 4 / 256);
  assert.equal(after.cache_available, true);
});

test('a model name that is not served addresses a LoRA adapter', async (t) => {
  const sim = await freshSim(t);
  const body = { model: 'sim-model-lora-a', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] };
  const t0 = performance.now();
  const miss = await (await chat(sim, 1, body)).json();
  const missMs = performance.now() - t0;
  assert.equal(miss.model, 'sim-model-lora-a');
  await (await chat(sim, 1, body)).json();
  const stats = await sim.stats(1);
  assert.equal(stats.model.lora_misses, 1);
  assert.ok(missMs >= 30, `the adapter load took ${missMs} ms`);
});
