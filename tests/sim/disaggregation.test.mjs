// rolter-sim's prefill/decode disaggregation (SPEC section 18): roles, the two-step
// kv_transfer_params handshake of vLLM's KV connectors, and the 503 for unusable parameters.
//   ROLTER_BIN_DIR=build/bin node --test tests/sim/disaggregation.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimFor } from '../lib/sim.mjs';
import { fetchWithin, waitUntil } from '../lib/http.mjs';

// Engines 0-1 prefill, 2-3 decode. Blocks of 4 tokens, so the prompt below has 4 full blocks.
const freshSim = (t, extra = []) => startSimFor(t, {
  engines: 4,
  args: ['--prefill-engines', '2', '--decode-engines', '2', '--ttft-ms', '1', '--token-ms', '1',
    '--block-size', '4', '--kv-blocks', '256', '--kv-transfer-ms-per-block', '0.5', ...extra],
});

const PROMPT = 'you are a careful assistant who answers in short sentences and never guesses '
  + 'what is the capital of france';  // 19 words: 4 full blocks of 4, and 3 more
const messages = [{ role: 'user', content: PROMPT }];

// What a gateway sends as step 1 (SPEC section 18).
const STEP1 = {
  do_remote_decode: true, do_remote_prefill: false, remote_engine_id: null,
  remote_block_ids: null, remote_host: null, remote_port: null,
};

function post(sim, i, path, body) {
  return fetchWithin(`${sim.engines[i].url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function step1(sim, i, body = { model: 'sim-model', messages }) {
  const response = await post(sim, i, '/v1/chat/completions',
    { ...body, stream: false, max_tokens: 1, kv_transfer_params: STEP1 });
  const answer = await response.json();
  assert.equal(response.status, 200, JSON.stringify(answer));
  return answer;
}

// A step 2 that must be refused with 503; resolves to the error message.
async function refusedStep2(sim, i, kv, body = { messages }) {
  const response = await post(sim, i, '/v1/chat/completions', { ...body, max_tokens: 2, kv_transfer_params: kv });
  const answer = await response.json();
  assert.equal(response.status, 503, JSON.stringify(answer));
  assert.match(answer.error.message, /^kv_transfer_params: /);
  return answer.error.message;
}

function sseChunks(text) {
  return text.split('\n\n').filter((b) => b.startsWith('data: {')).map((b) => JSON.parse(b.slice(6)));
}

test('step 1 on a prefill engine, step 2 streamed from a decode engine that pulls the blocks', async (t) => {
  const sim = await freshSim(t);
  assert.deepEqual(sim.engines.map((e) => e.role), ['prefill', 'prefill', 'decode', 'decode']);
  assert.equal(new Set(sim.engines.map((e) => e.engine_id)).size, 4);

  const first = await step1(sim, 0);
  assert.equal(first.usage.prompt_tokens, 19);
  assert.equal(first.usage.completion_tokens, 1);
  const kv = first.kv_transfer_params;
  assert.equal(kv.do_remote_prefill, true);
  assert.equal(kv.do_remote_decode, false);
  assert.equal(kv.remote_engine_id, sim.engines[0].engine_id);
  assert.equal(kv.remote_host, '127.0.0.1');
  assert.equal(kv.remote_port, sim.engines[0].port);
  assert.equal(kv.tp_size, 1);
  assert.equal(kv.remote_block_ids.length, 4);
  assert.ok(kv.remote_block_ids.every((id) => Number.isInteger(id) && id >= 0 && id < 256));
  assert.equal(new Set(kv.remote_block_ids).size, 4);
  const prefill = await sim.stats(0);
  assert.equal(prefill.role, 'prefill');
  assert.equal(prefill.remote_decode_prefills, 1);
  assert.equal(prefill.kv_holds, 1);
  assert.equal(prefill.model.prefill_computed_tokens, 19);

  // Step 2: the client's own body with the parameters added as received.
  const response = await post(sim, 2, '/v1/chat/completions', {
    model: 'sim-model', messages, max_tokens: 5, stream: true,
    stream_options: { include_usage: true }, kv_transfer_params: kv,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type'), /text\/event-stream/);
  const text = await response.text();
  assert.ok(text.trimEnd().endsWith('data: [DONE]'));
  const chunks = sseChunks(text);
  const content = chunks.filter((c) => c.choices?.[0]?.delta?.content);
  assert.equal(content.length, 5);
  const usage = chunks.find((c) => c.usage)?.usage;
  assert.equal(usage.prompt_tokens, 19);
  assert.equal(usage.completion_tokens, 5);

  const decode = await sim.stats(2);
  assert.equal(decode.role, 'decode');
  assert.equal(decode.remote_prefills, 1);
  assert.equal(decode.kv_blocks_pulled, 4);
  assert.equal(decode.remote_prefill_failures, 0);
  assert.equal(decode.model.prefill_computed_tokens, 0);  // the prompt was pulled, not computed
  // The pull released the prefill engine's hold (on its own strand, soon after).
  await waitUntil(async () => (await sim.stats(0)).kv_holds === 0, { what: 'the hold to be released' });

  // vLLM frees the blocks after one pull: the same parameters again are refused.
  const message = await refusedStep2(sim, 3, kv);
  assert.match(message, /pulled already/);
  assert.equal((await sim.stats(3)).remote_prefill_failures, 1);
  assert.equal((await sim.stats(3)).remote_prefills, 0);

  const metrics = await (await fetchWithin(`${sim.engines[2].url}/metrics`)).text();
  assert.match(metrics, /^rolter_sim:remote_prefills_total\{[^}]*\} 1$/m);
  assert.match(metrics, /^rolter_sim:kv_blocks_pulled_total\{[^}]*\} 4$/m);
  const prefillMetrics = await (await fetchWithin(`${sim.engines[0].url}/metrics`)).text();
  assert.match(prefillMetrics, /^rolter_sim:remote_decode_prefills_total\{[^}]*\} 1$/m);
});

test('the completions API does the handshake too, and a decode engine pulls only what it lacks', async (t) => {
  const sim = await freshSim(t);
  const prompt = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';  // 10 words, 2 blocks
  // Engine 3 already has the first block (a plain request of the first 4 words).
  const warm = await post(sim, 3, '/v1/completions', { prompt: 'alpha beta gamma delta', max_tokens: 1 });
  assert.equal(warm.status, 200);
  await warm.json();
  const response = await post(sim, 1, '/v1/completions',
    { prompt, stream: false, max_tokens: 1, kv_transfer_params: STEP1 });
  assert.equal(response.status, 200);
  const kv = (await response.json()).kv_transfer_params;
  assert.equal(kv.remote_engine_id, sim.engines[1].engine_id);
  assert.equal(kv.remote_block_ids.length, 2);
  const second = await post(sim, 3, '/v1/completions', { prompt, max_tokens: 3, kv_transfer_params: kv });
  const answer = await second.json();
  assert.equal(second.status, 200, JSON.stringify(answer));
  assert.equal(answer.usage.prompt_tokens, 10);
  assert.equal(answer.usage.completion_tokens, 3);
  assert.equal(answer.kv_transfer_params, undefined);
  const stats = await sim.stats(3);
  assert.equal(stats.kv_blocks_pulled, 1);
  assert.equal(stats.remote_prefills, 1);
  assert.equal(stats.model.prefill_computed_tokens, 4);  // the warm-up only
});

test('roles: decode refuses step 1, prefill refuses step 2, every role serves plain requests', async (t) => {
  const sim = await freshSim(t);
  const refused = await post(sim, 2, '/v1/chat/completions',
    { messages, max_tokens: 1, kv_transfer_params: STEP1 });
  assert.equal(refused.status, 400);
  assert.match((await refused.json()).error.message, /KV consumer and cannot serve do_remote_decode/);

  const kv = (await step1(sim, 0)).kv_transfer_params;
  const wrongWay = await post(sim, 1, '/v1/chat/completions', { messages, kv_transfer_params: kv });
  assert.equal(wrongWay.status, 400);
  assert.match((await wrongWay.json()).error.message, /KV producer/);
  assert.equal((await sim.stats(0)).kv_holds, 1);  // a refusal by role claims nothing

  for (let i = 0; i < 4; i++) {
    const chat = await post(sim, i, '/v1/chat/completions',
      { messages: [{ role: 'user', content: 'hello there' }], max_tokens: 2 });
    assert.equal(chat.status, 200);
    const answer = await chat.json();
    assert.equal(answer.usage.completion_tokens, 2);
    assert.equal(answer.kv_transfer_params, undefined);
    // Both flags false is a plain request too.
    const plain = await post(sim, i, '/v1/completions', {
      prompt: 'hello there', max_tokens: 2,
      kv_transfer_params: { do_remote_decode: false, do_remote_prefill: false },
    });
    assert.equal(plain.status, 200);
    assert.equal((await plain.json()).usage.completion_tokens, 2);
  }
});

test('unusable kv_transfer_params are refused 503 and counted', async (t) => {
  const sim = await freshSim(t, ['--kv-hold-ms', '300']);
  const kv = (await step1(sim, 0)).kv_transfer_params;
  const cases = [
    [{ ...kv, remote_port: 1 }, /no engine of this rolter-sim process listens on 127\.0\.0\.1:1 /],
    [{ ...kv, remote_engine_id: sim.engines[1].engine_id }, /does not match the engine at/],
    [{ ...kv, remote_engine_id: 'sim-1-0' }, /does not match/],
    [{ ...kv, remote_block_ids: 'all' }, /remote_block_ids must be an array/],
    [{ ...kv, remote_port: 'x' }, /remote_port must be/],
    [{ ...kv, remote_block_ids: [200, 201] }, /are not held for a pull/],
  ];
  for (const [params, pattern] of cases) {
    assert.match(await refusedStep2(sim, 2, params), pattern);
  }
  // Blocks of another prompt are not this request's KV.
  assert.match(await refusedStep2(sim, 2, kv, { messages: [{ role: 'user', content: `${PROMPT} and more` }] }),
    /hold another prompt/);
  // None of those claimed the hold; after --kv-hold-ms it ends by itself.
  assert.equal((await sim.stats(0)).kv_holds, 1);
  await waitUntil(async () => (await sim.stats(0)).kv_holds === 0,
    { timeoutMs: 5000, what: 'the hold to expire' });
  assert.match(await refusedStep2(sim, 3, kv), /expired \(--kv-hold-ms\)/);

  const decode2 = await sim.stats(2);
  assert.equal(decode2.remote_prefill_failures, cases.length + 1);
  assert.equal(decode2.remote_prefills, 0);
  assert.equal(decode2.kv_blocks_pulled, 0);
  assert.equal((await sim.stats(3)).remote_prefill_failures, 1);
});

test('an engine of role both serves both steps; its own held blocks need no pull', async (t) => {
  const sim = await startSimFor(t, { engines: 1, args: ['--ttft-ms', '1', '--token-ms', '1', '--block-size', '4'] });
  assert.equal(sim.engines[0].role, 'both');
  const kv = (await step1(sim, 0)).kv_transfer_params;
  assert.equal(kv.remote_port, sim.engines[0].port);
  const response = await post(sim, 0, '/v1/chat/completions', { messages, max_tokens: 2, kv_transfer_params: kv });
  assert.equal(response.status, 200);
  assert.equal((await response.json()).usage.prompt_tokens_details.cached_tokens, 16);
  const stats = await sim.stats(0);
  assert.equal(stats.remote_decode_prefills, 1);
  assert.equal(stats.remote_prefills, 1);
  assert.equal(stats.kv_blocks_pulled, 0);
  assert.equal(stats.model.prefill_computed_tokens, 19);  // step 1's prefill only
});
