// Prefill/decode disaggregation (SPEC §18) against a real rolter-sim fleet of 2 prefill and 2
// decode engines: a long prompt goes through a prefill engine (step 1) and then a decode engine
// that pulls its KV blocks (step 2); a short one goes straight to a decode engine; a prefill
// engine that refuses is replaced by the other, or the request is served whole when none
// answers; a decode engine that refuses is replaced by the other with the same parameters; and
// when every decode engine fails, step 1 runs once more before the gateway answers.
//
// What happened is read from the engines' own counters (/sim/stats), the access log's tries and
// the gateway's /metrics, not from the status alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startFleet } from '../lib/rolter.mjs';
import { postJson, settle, waitUntil } from '../lib/http.mjs';
import { endpointState, endpointValue, scrapeMetrics } from '../lib/metrics.mjs';

const kPrefill = [0, 1];
const kDecode = [2, 3];
// 60 words: 60 prompt tokens for the sim, and about 90 by the gateway's bytes / 4 (no token ids
// here), well above min_uncached_tokens.
const kLong = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
const kShort = 'hi';

function pdConfig(engines, { log, prefillStrategy = 'round_robin', decodeStrategy = 'round_robin', fallback = false }) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n';
  toml += `access_log = ${JSON.stringify(log)}\n`;
  toml += '[retry]\nmax_attempts = 2\n';
  const provider = (name, role, idx) => {
    toml += `[[providers]]\nname = "${name}"\nrole = "${role}"\n`;
    for (const i of idx) toml += `[[providers.instances]]\nbase_url = "${engines[i].url}"\n`;
  };
  provider('prefill', 'prefill', kPrefill);
  provider('decode', 'decode', kDecode);
  toml += '[[routes]]\nname = "chat"\nmode = "disaggregated"\nmin_uncached_tokens = 32\n';
  if (fallback) toml += 'fallbacks = ["backup"]\n';
  toml += `[routes.prefill]\nstrategy = "${prefillStrategy}"\n`;
  toml += 'targets = [{ provider = "prefill", model = "sim-model" }]\n';
  toml += `[routes.decode]\nstrategy = "${decodeStrategy}"\n`;
  toml += 'targets = [{ provider = "decode", model = "sim-model" }]\n';
  if (fallback) {
    // A whole-request route on prefill engine 1 (a prefill engine serves whole requests too).
    toml += `[[providers]]\nname = "backup"\nbase_url = "${engines[1].url}"\n`;
    toml += '[[routes]]\nname = "backup"\ntargets = [{ provider = "backup", model = "sim-model" }]\n';
  }
  return toml;
}

async function pdFleet(t, options = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rolter-pd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'access.log');
  const fleet = await startFleet(t, {
    engines: 4,
    simArgs: ['--time-scale', '0', '--prefill-engines', '2', '--decode-engines', '2',
      '--block-size', '4'],
    config: (engines) => pdConfig(engines, { log, ...options }),
  });
  const urls = fleet.sim.engines.map((e) => e.url);
  // The access-log lines so far, as objects.
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // The access-log line of the request with id `id`, once written.
  const lineOf = async (id) => {
    let found;
    await waitUntil(() => (found = lines().find((l) => l.request_id === id)) !== undefined,
      { timeoutMs: 5000, what: `the access-log line of ${id}` });
    return found;
  };
  return { ...fleet, urls, lineOf };
}

async function stats(sim) {
  return Promise.all([0, 1, 2, 3].map((i) => sim.stats(i)));
}
const sum = (list, idx, f) => idx.reduce((s, i) => s + f(list[i]), 0);

function ask(rolter, content, { stream = false } = {}) {
  return postJson(`${rolter.url}/v1/chat/completions`,
    { model: 'chat', messages: [{ role: 'user', content }], max_tokens: 4, stream });
}

// rolter_disaggregation_total{route="chat",path,count}.
async function splitCount(rolter, pathName, count) {
  const text = await scrapeMetrics(rolter);
  const re = new RegExp(`^rolter_disaggregation_total\\{[^}]*\\}\\s+(\\S+)$`, 'gm');
  let total = 0;
  for (const m of text.matchAll(re)) {
    const labels = m[0];
    if (labels.includes('route="chat"') && labels.includes(`path="${pathName}"`) &&
        labels.includes(`count="${count}"`)) {
      total += Number(m[1]);
    }
  }
  return total;
}

test('a long prompt streams through a prefill engine and a decode engine (official openai SDK)', async (t) => {
  const { sim, rolter, urls, lineOf } = await pdFleet(t);
  const openai = new OpenAI({ baseURL: `${rolter.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const { data: stream, response } = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: kLong }],
    max_tokens: 8,
    stream: true,
    stream_options: { include_usage: true },
  }).withResponse();
  let text = '';
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(text.split(' ').length >= 8, text);
  assert.equal(usage.completion_tokens, 8);
  assert.equal(usage.prompt_tokens, 60, 'the prompt is counted once');
  assert.equal(response.headers.get('x-rolter-attempts'), '2', 'one prefill and one decode attempt');

  const s = await stats(sim);
  assert.equal(sum(s, kPrefill, (e) => e.remote_decode_prefills), 1, 'step 1 on one prefill engine');
  assert.equal(sum(s, kPrefill, (e) => e.model.prefill_computed_tokens), 60, 'the prompt computed there');
  assert.equal(sum(s, kDecode, (e) => e.remote_prefills), 1, 'step 2 on one decode engine');
  assert.equal(sum(s, kDecode, (e) => e.kv_blocks_pulled), 15, 'its 15 full blocks of 4 pulled');
  assert.equal(sum(s, kDecode, (e) => e.model.prefill_computed_tokens), 0, 'no prefill on the decode engine');

  const line = await lineOf(response.headers.get('x-request-id'));
  assert.equal(line.status, 200);
  assert.equal(line.attempts, 2);
  assert.deepEqual(line.tries.map((x) => [x.step, x.status]), [['prefill', 200], ['decode', 200]]);
  assert.ok(kPrefill.some((i) => urls[i] === line.tries[0].endpoint), line.tries[0].endpoint);
  assert.ok(kDecode.some((i) => urls[i] === line.tries[1].endpoint), line.tries[1].endpoint);
  assert.ok(kDecode.some((i) => urls[i] === line.endpoint), 'the answer came from the decode engine');
  assert.equal(await splitCount(rolter, 'disaggregated', 'bytes'), 1);
});

test('a short prompt skips the prefill engines', async (t) => {
  const { sim, rolter, lineOf } = await pdFleet(t);
  const res = await settle(await ask(rolter, kShort, { stream: true }));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-rolter-attempts'), '1');
  const s = await stats(sim);
  assert.equal(sum(s, kPrefill, (e) => e.requests), 0, 'no prefill engine saw it');
  assert.equal(sum(s, kDecode, (e) => e.requests), 1);
  assert.equal(sum(s, kDecode, (e) => e.remote_prefills), 0, 'served whole');
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.deepEqual(line.tries.map((x) => x.step ?? 'whole'), ['whole']);
  assert.equal(await splitCount(rolter, 'aggregated', 'bytes'), 1);
  assert.equal(await splitCount(rolter, 'disaggregated', 'bytes'), 0);
});

test('a prefill engine that refuses is replaced by the other one', async (t) => {
  const { sim, rolter, urls, lineOf } = await pdFleet(t);
  await sim.setFault(0, { refuse: true });  // round_robin picks prefill engine 0 first
  const res = await settle(await ask(rolter, kLong));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-rolter-attempts'), '3');
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.deepEqual(line.tries.map((x) => [x.step, x.endpoint === urls[0] ? 'P0' : x.endpoint === urls[1] ? 'P1' : 'D', x.reason ?? x.status]),
    [['prefill', 'P0', 'connect_refused'], ['prefill', 'P1', 200], ['decode', 'D', 200]]);
  const s = await stats(sim);
  assert.equal(s[1].remote_decode_prefills, 1);
  assert.equal(sum(s, kDecode, (e) => e.remote_prefills), 1);
});

test('with no prefill engine answering, the request is served whole on a decode engine', async (t) => {
  const { sim, rolter, lineOf } = await pdFleet(t);
  for (const i of kPrefill) await sim.setFault(i, { refuse: true });
  const res = await settle(await ask(rolter, kLong, { stream: true }));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-rolter-attempts'), '3', 'two refused prefills, one whole request');
  const s = await stats(sim);
  assert.equal(sum(s, kDecode, (e) => e.remote_prefills), 0);
  assert.equal(sum(s, kDecode, (e) => e.model.prefill_computed_tokens), 60, 'the decode engine computed the prompt');
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.deepEqual(line.tries.map((x) => x.step ?? 'whole'), ['prefill', 'prefill', 'whole']);
  assert.equal(await splitCount(rolter, 'prefill_failed', 'bytes'), 1);
});

test('a decode engine that refuses is replaced by the other with the same parameters', async (t) => {
  const { sim, rolter, urls, lineOf } = await pdFleet(t);
  await sim.setFault(2, { refuse: true });  // round_robin picks decode engine 2 first
  const res = await settle(await ask(rolter, kLong, { stream: true }));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-rolter-attempts'), '3');
  const s = await stats(sim);
  assert.equal(sum(s, kPrefill, (e) => e.remote_decode_prefills), 1, 'step 1 ran once');
  assert.equal(s[3].remote_prefills, 1, 'engine 3 pulled what engine 2 never took');
  assert.equal(s[3].model.prefill_computed_tokens, 0);
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.deepEqual(line.tries.map((x) => [x.step, x.endpoint === urls[2] ? 'D2' : x.endpoint === urls[3] ? 'D3' : 'P', x.reason ?? x.status]),
    [['prefill', 'P', 200], ['decode', 'D2', 'connect_refused'], ['decode', 'D3', 200]]);
});

test('when every decode engine fails, step 1 runs once more before the gateway answers', async (t) => {
  const { sim, rolter, lineOf } = await pdFleet(t);
  for (const i of kDecode) await sim.setFault(i, { error_rate: 1, error_status: 503 });
  const res = await settle(await ask(rolter, kLong));
  // The last attempt has no other to try: its answer is relayed, as on any route.
  assert.equal(res.status, 503, res.text);
  assert.match(res.text, /simulated engine error/);
  // 2 rounds of (1 prefill + 2 decode attempts).
  assert.equal(res.headers.get('x-rolter-attempts'), '6');
  const s = await stats(sim);
  assert.equal(sum(s, kPrefill, (e) => e.remote_decode_prefills), 2, 'a second step 1');
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.deepEqual(line.tries.map((x) => [x.step, x.reason ?? x.status]), [
    ['prefill', 200], ['decode', 'status_503'], ['decode', 'status_503'],
    ['prefill', 200], ['decode', 'status_503'], ['decode', 503]]);
});

test('a fallback route gets the client\'s body, without the transfer parameters', async (t) => {
  const { sim, rolter, lineOf } = await pdFleet(t, { fallback: true });
  for (const i of kDecode) await sim.setFault(i, { refuse: true });
  const res = await settle(await ask(rolter, kLong));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-rolter-fallbacks'), 'chat');
  assert.equal(res.headers.get('x-rolter-route'), 'backup');
  const backup = await sim.stats(1);
  assert.equal(backup.remote_prefills, 0, 'no kv_transfer_params reached the fallback');
  const line = await lineOf(res.headers.get('x-request-id'));
  assert.equal(line.tries.at(-1).step, undefined, 'the fallback serves the request whole');
  assert.equal(line.tries.at(-1).status, 200);
  assert.ok(line.tries.some((x) => x.step === 'decode'), JSON.stringify(line.tries));
});

// With the decode engines' KV events and their /tokenize, the split decision counts exactly: a
// new prompt is split (counted in tokens: no index is live yet), and the next turn of the same conversation, whose history the decode
// engine now holds (it pulled those blocks), is finished there whole.
test('the decode engines\' KV indexes decide: a follow-up turn stays whole where its history is', async (t) => {
  const { sim, rolter } = await startFleet(t, {
    engines: 4,
    simArgs: ['--time-scale', '0', '--prefill-engines', '2', '--decode-engines', '2',
      '--block-size', '4', '--kv-port', '0'],
    config: (engines) => {
      let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n';
      engines.forEach((e, i) => {
        const role = kPrefill.includes(i) ? 'prefill' : 'decode';
        toml += `[[providers]]\nname = "${role}-${i}"\nrole = "${role}"\nbase_url = "${e.url}"\n`;
        if (role === 'decode') {
          toml += 'tokenize = "engine"\n';
          toml += `[providers.kv_events]\nendpoint = "tcp://127.0.0.1:${e.kv_port}"\nblock_size = 4\n`;
        }
      });
      toml += '[[routes]]\nname = "chat"\nmode = "disaggregated"\nmin_uncached_tokens = 32\n';
      toml += '[routes.prefill]\ntargets = [{ provider = "prefill-0", model = "sim-model" }, { provider = "prefill-1", model = "sim-model" }]\n';
      toml += '[routes.decode]\nstrategy = "precise_cache_aware"\n';
      toml += 'targets = [{ provider = "decode-2", model = "sim-model" }, { provider = "decode-3", model = "sim-model" }]\n';
      return toml;
    },
  });
  const events = async () => {
    const text = await scrapeMetrics(rolter);
    return kDecode.reduce((s, i) => s + (endpointValue(text, 'rolter_kv_events_total', `decode-${i}`) ?? 0), 0);
  };
  const before = await events();

  const first = await settle(await ask(rolter, kLong));
  assert.equal(first.status, 200, first.text);
  assert.equal(first.headers.get('x-rolter-attempts'), '2');
  // No decode engine has published anything yet: the count is the prompt's tokens (/tokenize).
  assert.equal(await splitCount(rolter, 'disaggregated', 'tokens'), 1);
  const holder = kDecode.find((i) => first.headers.get('x-rolter-target') === `decode-${i}/sim-model`);
  assert.ok(holder !== undefined, first.headers.get('x-rolter-target'));
  // The pulled blocks reach the gateway's index of that engine.
  await waitUntil(async () => (await events()) > before &&
    endpointState(await scrapeMetrics(rolter), 'rolter_kv_events_state', `decode-${holder}`) === 'live',
  { timeoutMs: 10000, what: 'the decode engine\'s KV events for the pulled blocks' });

  // The next turn: the same history and 4 more words. 64 tokens, of which the holder has 60.
  const computed = (await sim.stats(holder)).model.prefill_computed_tokens;
  const next = await settle(await ask(rolter, `${kLong} and then what next`));
  assert.equal(next.status, 200, next.text);
  assert.equal(next.headers.get('x-rolter-attempts'), '1', 'no prefill step');
  assert.equal(next.headers.get('x-rolter-target'), `decode-${holder}/sim-model`);
  assert.equal(await splitCount(rolter, 'aggregated', 'kv_index'), 1);
  const stats = await sim.stats(holder);
  assert.equal(stats.model.prefill_computed_tokens - computed, 4, 'only the new words computed');
  assert.equal(sum(await Promise.all([0, 1].map((i) => sim.stats(i))), [0, 1], (e) => e.remote_decode_prefills), 1);
});
