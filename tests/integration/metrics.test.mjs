// GET /metrics: valid Prometheus exposition with the SPEC §9 series that exist, after real traffic.
// Each test starts its own rolter-sim and rolter, so every counter starts at zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFleet, configFor } from '../lib/rolter.mjs';
import { chat, fetchWithin, settle, waitUntil } from '../lib/http.mjs';
import { promtool } from '../lib/metrics.mjs';

// Two engines behind route `m` (round robin).
function fleet(t) {
  return startFleet(t, {
    engines: 2,
    config: (engines) => configFor({
      engines,
      routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }, { engine: 1, model: 'up' }] }],
    }),
  });
}

const ask = (rolter, stream = false) => chat(rolter.url, 'm', { content: 'count me', maxTokens: 2, stream });

// Four requests (two streamed) over both engines, then two more with engine 1 refusing: one of
// them meets the refusal, is retried on engine 0 and parks engine 1. Returns the six answers.
async function trafficWithARetry(sim, rolter) {
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await ask(rolter, i % 2 === 1));
  await sim.setFault(1, { refuse: true });
  for (let i = 0; i < 2; i++) answers.push(await ask(rolter));
  await sim.clearFault(1);
  for (const r of answers) assert.equal(r.status, 200, r.text);
  return answers;
}

async function scrape(rolter) {
  const r = await settle(await fetchWithin(`${rolter.url}/metrics`));
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return r.text;
}

// The exposition once route m's `n` answers are all counted. A response is counted once its last
// byte is written, so a scrape right after the client read it may come first. Its duration is
// observed after its status and tokens, so once a scrape shows n durations, the next shows all.
async function scrapeCounted(rolter, n) {
  await waitUntil(async () => value(await scrape(rolter), 'rolter_request_duration_seconds_count{route="m"}') === n,
    { timeoutMs: 5000, what: `${n} answers counted` });
  return scrape(rolter);
}

function value(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('request, pick, latency, retry, park, instance and reload series', async (t) => {
  const { sim, rolter } = await fleet(t);
  const answers = await trafficWithARetry(sim, rolter);

  // Round robin gave each engine two of the first four; engine 1 refused the rest at connect.
  const stats = await sim.allStats();
  assert.deepEqual(stats.map((s) => s.requests), [4, 2]);
  const retriesSeen = answers.reduce((sum, r) => sum + (r.attempts - 1), 0);
  assert.equal(retriesSeen, 1, `x-rolter-attempts: ${answers.map((r) => r.attempts).join(', ')}`);
  assert.equal(answers.slice(4).every((r) => r.engine === 0), true);

  const text = await scrapeCounted(rolter, 6);
  assert.equal(value(text, 'rolter_requests_total{code_class="2xx",route="m",target="engine-0/up"}'), 4);
  assert.equal(value(text, 'rolter_requests_total{code_class="2xx",route="m",target="engine-1/up"}'), 2);
  assert.equal(value(text, 'rolter_requests_by_code_total{code="200",route="m"}'), 6);
  assert.ok(value(text, 'rolter_inter_token_seconds_count{route="m"}') >= 0, 'the route has the series');
  assert.equal(value(text, 'rolter_request_duration_seconds_count{route="m"}'), 6);
  assert.equal(value(text, 'rolter_ttft_seconds_count{route="m"}'), 6);
  assert.equal(value(text, 'rolter_retries_total{route="m"}'), retriesSeen);
  assert.match(text, /rolter_parks_total\{endpoint="engine-1@http:\/\/127\.0\.0\.1:\d+",reason="refused"\} 1\n/);
  assert.match(text, /rolter_picks_total\{route="m",strategy="round_robin",target="engine-0\/up"\} \d+/);
  assert.match(text, /rolter_in_flight\{endpoint="engine-0@http:\/\/127\.0\.0\.1:\d+"\} 0\n/);
  assert.match(text, /rolter_breaker_state\{endpoint="engine-0@[^"]+",state="closed"\} 1\n/);
  assert.match(text, /rolter_breaker_state\{endpoint="engine-0@[^"]+",state="open"\} 0\n/);
  assert.match(text, /rolter_endpoint_healthy\{endpoint="engine-0@[^"]+"\} 1\n/);
  assert.match(text, /rolter_endpoint_parked\{endpoint="engine-1@[^"]+"\} 1\n/);
  assert.match(text, /^process_resident_memory_bytes \d/m);
  assert.doesNotMatch(text, /instance="/, 'Prometheus sets the instance label itself');
  assert.equal(value(text, 'rolter_tokens_total{direction="out",route="m"}'), 12, '6 answers x 2 tokens');
  assert.ok(value(text, 'rolter_tokens_total{direction="in",route="m"}') > 0);
  assert.equal(value(text, 'rolter_config_reloads_total{result="ok"}'), 1);
  assert.equal(value(text, 'rolter_config_version'), 1);
});

test('the exposition passes promtool check metrics', async (t) => {
  const { sim, rolter } = await fleet(t);
  await trafficWithARetry(sim, rolter); // so the histograms, retries and parks have samples
  const text = await scrapeCounted(rolter, 6);
  assert.match(text, /^rolter_retries_total\{route="m"\} 1$/m);
  const result = await promtool(t, text);
  // promtool exits 0 when the text parses; lint findings (e.g. naming advice) exit non-zero.
  assert.equal(result.code, 0, result.out);
});

test('one JSON log line per request, without prompt text', async (t) => {
  const { rolter } = await fleet(t);
  const mark = rolter.log.text.length;
  const r = await ask(rolter, true);
  assert.equal(r.status, 200, r.text);
  const line = (await rolter.log.waitFor(/^\{"ts_ms".*"event":"request".*$/m, { from: mark, timeoutMs: 5000 }))[0];
  const entry = JSON.parse(line);
  assert.equal(entry.route, 'm');
  assert.equal(entry.target, r.target);
  assert.equal(entry.status, 200);
  assert.equal(entry.attempts, 1);
  assert.equal(entry.tokens_out, 2);
  assert.ok(entry.ttft_ms >= 0 && entry.duration_ms >= entry.ttft_ms);
  assert.equal(rolter.log.text.match(/"event":"request"/g).length, 1, 'one line for one request');
  assert.doesNotMatch(rolter.log.text, /count me/, 'prompt text never reaches the log');
});
