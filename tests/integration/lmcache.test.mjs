// strategy = "lmcache_aware" (SPEC §6.9): rolter polls each instance's lmcache.endpoint for
// {"occupancy", "cache_available"} and sends a request to the instance with the most free cache
// (1 − occupancy), least load 0.25 behind it. An empty, saturated, unavailable, failed or stale
// cache is neutral (0), so with no usable value least load decides.
//
// The simulator's /occupancy is the fraction of its KV blocks resident (held by a request or kept
// as prefix cache): a long prompt leaves its full blocks behind after it finishes, so an engine is
// warmed to an occupancy by sending it long prompts directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRolter } from '../lib/rolter.mjs';
import { startSimFor } from '../lib/sim.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';
import { chat, fetchWithin, settle, waitUntil } from '../lib/http.mjs';
import { endpointValue, promtool, scrapeMetrics } from '../lib/metrics.mjs';

// 100 blocks of 16 tokens: a 400-word prompt fills 25 blocks, a quarter of the cache.
const kSimArgs = ['--time-scale', '0', '--kv-blocks', '100', '--block-size', '16'];
const kWordsPerWarmup = 400;
const kPicks = 12;

// GET an engine's /occupancy.
async function occupancy(engine) {
  const r = await settle(await fetchWithin(`${engine.url}/occupancy`));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.cache_available, true);
  return r.json.occupancy;
}

// Sends `prompts` long prompts straight to `engine` (not through rolter), each of distinct words
// so no two share a cached block; resolves with the engine's occupancy afterwards.
async function warm(engine, prompts, tag) {
  for (let p = 0; p < prompts; p++) {
    const words = Array.from({ length: kWordsPerWarmup }, (_, w) => `${tag}${p}w${w}`).join(' ');
    const r = await chat(engine.url, 'sim-model', { content: words });
    assert.equal(r.status, 200, r.text);
  }
  return occupancy(engine);
}

// rolter.toml: one provider per engine, each with its own lmcache endpoint (lmcacheUrls[i]), and
// route "m" over them with strategy lmcache_aware.
function lmcacheConfig(engines, lmcacheUrls) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n\n';
  engines.forEach((e, i) => {
    toml += `[[providers]]\nname = "engine-${i}"\nbase_url = ${JSON.stringify(e.url)}\n` +
      `lmcache = { endpoint = ${JSON.stringify(lmcacheUrls[i])}, refresh_secs = 1, stale_secs = 3 }\n\n`;
  });
  toml += '[[routes]]\nname = "m"\nstrategy = "lmcache_aware"\n';
  engines.forEach((_, i) => { toml += `[[routes.targets]]\nprovider = "engine-${i}"\nmodel = "sim-model"\n`; });
  return toml;
}

// Resolves with the metrics text once `check(occupancyOf)` holds, occupancyOf(i) being engine-i's
// rolter_lmcache_occupancy_ratio (NaN while unusable, undefined before the first poll is set up).
function waitForOccupancy(rolter, check, what) {
  let text;
  return waitUntil(async () => {
    text = await scrapeMetrics(rolter);
    return check((i) => endpointValue(text, 'rolter_lmcache_occupancy_ratio', `engine-${i}`));
  }, { timeoutMs: 10000, intervalMs: 50, what }).then(() => text);
}

// Sends `n` requests one after another (so every load is 0 at each pick); returns the count per
// target label (x-rolter-target).
async function targets(rolter, n) {
  const counts = {};
  for (let i = 0; i < n; i++) {
    const r = await chat(rolter.url, 'm', { content: `short request ${i}` });
    assert.equal(r.status, 200, r.text);
    counts[r.target] = (counts[r.target] ?? 0) + 1;
  }
  return counts;
}

test('the engine with more free LMCache wins while loads are equal', async (t) => {
  const sim = await startSimFor(t, { engines: 2, args: kSimArgs });
  // engine-0 three quarters full, engine-1 a quarter: engine-1 has the headroom.
  const full = await warm(sim.engines[0], 3, 'a');
  const light = await warm(sim.engines[1], 1, 'b');
  assert.ok(full >= 0.6 && full < 1, `engine-0 occupancy ${full}`);
  assert.ok(light > 0 && light <= 0.4, `engine-1 occupancy ${light}`);
  t.diagnostic(`occupancy: engine-0 ${full}, engine-1 ${light}`);

  const rolter = await startRolter({
    config: lmcacheConfig(sim.engines, sim.engines.map((e) => `${e.url}/occupancy`)),
  });
  t.after(() => rolter.stop());
  const text = await waitForOccupancy(rolter, (occ) => occ(0) === full && occ(1) === light,
    'both occupancies polled');
  const lint = await promtool(t, text);
  assert.equal(lint.code, 0, lint.out);

  assert.deepEqual(await targets(rolter, kPicks), { 'engine-1/sim-model': kPicks });
});

test('a failed LMCache endpoint is neutral at once', async (t) => {
  const sim = await startSimFor(t, { engines: 2, args: kSimArgs });
  // Headroom margins stay above least load's weight (0.25): the client may send its next request
  // before rolter has counted the last one finished, so one engine can show a load of 1 at a pick.
  const engine1 = await warm(sim.engines[1], 2, 'c');
  assert.ok(engine1 >= 0.4 && engine1 < 0.6, `engine-1 occupancy ${engine1}`);
  // engine-0's endpoint is a stub: first a tenth full (more headroom than engine-1), then failing.
  const stub = await startEchoUpstream();
  t.after(() => stub.close());
  stub.setReply({ body: { occupancy: 0.1, cache_available: true } });

  const rolter = await startRolter({
    config: lmcacheConfig(sim.engines, [`${stub.url}/occupancy`, `${sim.engines[1].url}/occupancy`]),
  });
  t.after(() => rolter.stop());
  await waitForOccupancy(rolter, (occ) => occ(0) === 0.1 && occ(1) === engine1,
    'both occupancies polled');
  assert.deepEqual(await targets(rolter, kPicks), { 'engine-0/sim-model': kPicks });

  // The stub fails: engine-0 is neutral with its next poll (not kept at its last good value), so
  // engine-1's smaller headroom now wins every pick.
  stub.setReply({ status: 500, body: { error: 'lmcache is down' } });
  await waitForOccupancy(rolter, (occ) => Number.isNaN(occ(0)) && occ(1) === engine1,
    'engine-0 failing its polls');
  assert.deepEqual(await targets(rolter, kPicks), { 'engine-1/sim-model': kPicks });
  const failures = endpointValue(await scrapeMetrics(rolter), 'rolter_lmcache_poll_failures_total', 'engine-0');
  assert.ok(failures >= 1, `engine-0 poll failures ${failures}`);
});

test('with no usable occupancy (failed, unavailable) least load decides', async (t) => {
  const sim = await startSimFor(t, { engines: 2, args: kSimArgs });
  // engine-0 holds some cache, which would win were its endpoint read: it is not.
  await warm(sim.engines[0], 1, 'd');
  // engine-0's endpoint refuses connections (nothing listens on port 1); engine-1's answers but
  // reports its cache unavailable.
  const unavailable = await startEchoUpstream();
  t.after(() => unavailable.close());
  unavailable.setReply({ body: { occupancy: 0.5, cache_available: false } });
  const rolter = await startRolter({
    config: lmcacheConfig(sim.engines, ['http://127.0.0.1:1/occupancy', `${unavailable.url}/occupancy`]),
  });
  t.after(() => rolter.stop());
  await waitUntil(async () => {
    const text = await scrapeMetrics(rolter);
    return endpointValue(text, 'rolter_lmcache_poll_failures_total', 'engine-0') >= 1 &&
      unavailable.requests.length >= 1;
  }, { timeoutMs: 10000, intervalMs: 50, what: 'a poll of each endpoint' });
  const text = await scrapeMetrics(rolter);
  assert.ok(Number.isNaN(endpointValue(text, 'rolter_lmcache_occupancy_ratio', 'engine-0')));
  assert.ok(Number.isNaN(endpointValue(text, 'rolter_lmcache_occupancy_ratio', 'engine-1')));
  // Every score neutral and every engine idle at each pick: ties go at random, so both engines
  // serve (the chance that 40 picks all land on one is 2 × 2^-40).
  const spread = await targets(rolter, 40);
  assert.ok(spread['engine-0/sim-model'] > 0 && spread['engine-1/sim-model'] > 0,
    `spread ${JSON.stringify(spread)}`);
});
