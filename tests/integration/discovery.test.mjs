// DNS discovery of a provider's instances (SPEC §17) against a real DNS server: Debian's dnsmasq
// on a loopback port, and rolter-sim engines on 127.0.0.2, .3 and .4, all on one port, as the pods
// of a headless Service would be. Each test changes the records and watches what rolter does:
// traffic reaches an added instance; an instance that leaves finishes its streams and gets nothing
// new; with DNS down the last good set keeps serving; an instance that returns keeps its KV index.
//
// Every wait is on what rolter or the engines report (the log, /metrics, the engines' counters),
// with a deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startRolter } from '../lib/rolter.mjs';
import { startSimFor } from '../lib/sim.mjs';
import { startDnsmasq } from '../lib/dnsmasq.mjs';
import { postJson, settle, waitUntil, readSse } from '../lib/http.mjs';
import { scrapeMetrics } from '../lib/metrics.mjs';

const kHosts = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const kName = 'engines.rolter.test';
const kIntervalMs = 500;
const kBlockSize = 16;

// A TCP port free on every host, for the engines' HTTP (and the next two for KV events).
async function portFreeOn(hosts) {
  for (let attempt = 0; attempt < 20; ++attempt) {
    const probe = net.createServer();
    await new Promise((resolve) => probe.listen(0, hosts[0], resolve));
    const { port } = probe.address();
    await new Promise((resolve) => probe.close(resolve));
    let free = true;
    for (const host of hosts) {
      for (const p of [port, port + 1, port + 2]) {
        free &&= await new Promise((resolve) => {
          const s = net.createServer();
          s.once('error', () => resolve(false));
          s.listen(p, host, () => s.close(() => resolve(true)));
        });
      }
    }
    if (free && port + 2 < 65536) return port;
  }
  throw new Error('no port free on every test host');
}

const hostsFile = (hosts) => hosts.map((h) => `${h} ${kName}\n`).join('');

// dnsmasq naming `initial`, one engine per test host (all on one port, KV events with replay),
// and rolter discovering them.
async function discoveredFleet(t, initial, { timeScale = 0, simArgs = [] } = {}) {
  const port = await portFreeOn(kHosts);
  const dns = await startDnsmasq({ hosts: hostsFile(initial) });
  t.after(() => dns.stop());
  const sims = {};
  for (const host of kHosts) {
    sims[host] = await startSimFor(t, {
      port,
      args: ['--host', host, '--time-scale', String(timeScale), '--kv-port', String(port + 1), '--kv-replay',
        '--block-size', String(kBlockSize), ...simArgs],
    });
  }
  const config = `[server]
listen = "127.0.0.1:0"
first_byte_timeout_ms = 10000
drain_timeout_ms = 10000

[[providers]]
name = "vllm"
discover = "dns://${kName}:${port}"
discover_interval_ms = ${kIntervalMs}
discover_resolver = "${dns.resolver}"
[providers.kv_events]
endpoint = "tcp://{host}:${port + 1}"
replay_endpoint = "tcp://{host}:${port + 2}"
block_size = ${kBlockSize}

[[routes]]
name = "m"
strategy = "precise_cache_aware"
[[routes.targets]]
provider = "vllm"
model = "sim-model"
`;
  const rolter = await startRolter({ config });
  t.after(() => rolter.stop());
  const identity = (host) => `vllm@http://${host}:${port}`;  // the metrics' endpoint label
  return { dns, sims, rolter, port, identity };
}

// How many endpoints rolter serves for the provider, by its own gauge.
async function instancesServed(rolter) {
  const m = (await scrapeMetrics(rolter)).match(/^rolter_discovery_endpoints\{provider="vllm"\} (\S+)$/m);
  return m ? Number(m[1]) : undefined;
}
const waitServed = (rolter, n, timeoutMs = 10 * kIntervalMs) =>
  waitUntil(async () => (await instancesServed(rolter)) === n,
    { timeoutMs, what: `rolter to serve ${n} discovered instance(s)` });

const requests = async (sim) => (await sim.stats(0)).requests;

async function complete(rolter, prompt = 'hello', extra = {}) {
  return settle(await postJson(`${rolter.url}/v1/completions`,
    { model: 'm', prompt, max_tokens: 1, ...extra }, { headers: { 'x-rolter-explain': '1' } }));
}

test('an instance added to DNS takes traffic within one interval, with no reload', async (t) => {
  const { dns, sims, rolter } = await discoveredFleet(t, [kHosts[0]]);
  await waitServed(rolter, 1);
  for (let i = 0; i < 4; ++i) assert.equal((await complete(rolter, `a${i}`)).status, 200);
  assert.equal(await requests(sims[kHosts[0]]), 4);
  assert.equal(await requests(sims[kHosts[1]]), 0, 'not in DNS yet: no traffic');

  const logAt = rolter.log.text.length;
  const added = Date.now();
  await dns.setHosts(hostsFile([kHosts[0], kHosts[1]]));
  await rolter.log.waitFor(/discovery: vllm: 2 instance\(s\): 127\.0\.0\.2:\d+, 127\.0\.0\.3:\d+/,
    { from: logAt, timeoutMs: 10 * kIntervalMs });
  const seenAfterMs = Date.now() - added;
  // Within one interval of the change, plus the lookup and a scheduling turn.
  assert.ok(seenAfterMs < 2 * kIntervalMs + 1000, `found after ${seenAfterMs} ms`);
  await waitUntil(async () => {
    assert.equal((await complete(rolter, `b${Date.now()}`)).status, 200);
    return (await requests(sims[kHosts[1]])) > 0;
  }, { timeoutMs: 5000, what: 'a request to reach the added engine' });
  assert.match(rolter.log.text, /looking up dns:\/\/engines\.rolter\.test:\d+ every 500 ms/);
  assert.doesNotMatch(rolter.log.text, /config reloaded/, 'no reload was involved');
});

test('before the first good lookup the route answers 503; the first instance found serves', async (t) => {
  const { dns, sims, rolter } = await discoveredFleet(t, []);
  await rolter.log.waitFor(/discovery: vllm: lookup of .* failed: .*no addresses|discovery: vllm: lookup of .* failed/,
    { timeoutMs: 10 * kIntervalMs });
  const refused = await complete(rolter, 'too early');
  assert.equal(refused.status, 503, refused.text);
  await dns.setHosts(hostsFile([kHosts[2]]));
  await waitServed(rolter, 1);
  const served = await complete(rolter, 'now');
  assert.equal(served.status, 200, served.text);
  assert.equal(await requests(sims[kHosts[2]]), 1);
});

test('an instance removed from DNS finishes its streams and gets no new request', async (t) => {
  const { dns, sims, rolter } = await discoveredFleet(t, [kHosts[0], kHosts[1]],
    { timeScale: 1, simArgs: ['--ttft-ms', '1', '--token-ms', '20'] });
  await waitServed(rolter, 2);
  // Long streams until one runs on the engine that will leave (the pick is rolter's).
  const leaving = sims[kHosts[1]];
  const streams = [];
  await waitUntil(async () => {
    const res = await postJson(`${rolter.url}/v1/completions`,
      { model: 'm', prompt: `stream ${streams.length}`, max_tokens: 150, stream: true, ignore_eos: true });
    assert.equal(res.status, 200);
    streams.push(readSse(res));
    return (await leaving.stats(0)).in_flight > 0;
  }, { timeoutMs: 10000, intervalMs: 0, what: 'a stream on the engine that will leave' });
  const servedBefore = await requests(leaving);

  const logAt = rolter.log.text.length;
  await dns.setHosts(hostsFile([kHosts[0]]));
  await rolter.log.waitFor(/discovery: vllm: 1 instance\(s\): 127\.0\.0\.2:\d+ \(were: /,
    { from: logAt, timeoutMs: 10 * kIntervalMs });
  assert.ok((await leaving.stats(0)).in_flight > 0, 'the stream is still running after the change');
  for (let i = 0; i < 10; ++i) assert.equal((await complete(rolter, `after ${i}`)).status, 200);
  // Every stream, the leaving engine's included, ends with all its tokens.
  for (const events of await Promise.all(streams)) {
    assert.equal(events.at(-1), '[DONE]');
    const text = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e).choices[0]?.text ?? '').join('');
    assert.ok(text.length > 0);
  }
  assert.equal(await requests(leaving), servedBefore, 'no new request reached the removed engine');
  assert.equal((await leaving.stats(0)).in_flight, 0);
});

test('with DNS down the last good set keeps serving, and the failure is counted', async (t) => {
  const { dns, sims, rolter } = await discoveredFleet(t, [kHosts[0], kHosts[1]]);
  await waitServed(rolter, 2);
  const logAt = rolter.log.text.length;
  await dns.stop();
  await rolter.log.waitFor(/discovery: vllm: lookup of dns:\/\/engines\.rolter\.test:\d+ failed: .*; keeping the 2 instance\(s\) found before/,
    { from: logAt, timeoutMs: 10 * kIntervalMs });
  const before = (await requests(sims[kHosts[0]])) + (await requests(sims[kHosts[1]]));
  for (let i = 0; i < 12; ++i) assert.equal((await complete(rolter, `down ${i}`)).status, 200);
  const after = (await requests(sims[kHosts[0]])) + (await requests(sims[kHosts[1]]));
  assert.equal(after - before, 12, 'every request served by the instances found before');
  assert.ok((await requests(sims[kHosts[1]])) > 0);
  const metrics = await scrapeMetrics(rolter);
  // prometheus-cpp writes labels in name order.
  const failed = metrics.match(/^rolter_discovery_lookups_total\{outcome="failed",provider="vllm"\} (\S+)$/m);
  assert.ok(failed && Number(failed[1]) >= 1, 'failed lookups are counted');
  assert.equal(await instancesServed(rolter), 2);
});

// Token ids: `blocks` full blocks from `seed`, plus a few of their own.
const tokens = (seed, blocks, tail = 3) =>
  Array.from({ length: blocks * kBlockSize + tail }, (_, i) => seed * 100000 + i);

// The value of `metric`'s series for the endpoint `identity`, with `labels` after its endpoint
// label (e.g. ',state="live"').
async function endpointMetric(rolter, metric, identity, labels = '') {
  const escaped = (identity + labels).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = (await scrapeMetrics(rolter)).match(new RegExp(`^${metric}\\{endpoint="${escaped}\\} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}
const kvEvents = async (rolter, identity) => (await endpointMetric(rolter, 'rolter_kv_events_total', identity, '"')) ?? 0;
const kvLive = async (rolter, identity) =>
  (await endpointMetric(rolter, 'rolter_kv_events_state', identity, '",state="live"')) === 1;

test('an instance that leaves DNS and returns keeps its KV index', async (t) => {
  const { dns, sims, rolter, port, identity } = await discoveredFleet(t, [kHosts[0], kHosts[1]]);
  await waitServed(rolter, 2);
  const holder = kHosts[1];
  const direct = async (prompt) => {
    const r = await settle(await postJson(`http://${holder}:${port}/v1/completions`,
      { model: 'sim-model', prompt, max_tokens: 1 }));
    assert.equal(r.status, 200, r.text);
  };
  const kept = tokens(1, 6);
  // The holder caches `kept`; rolter reads the blocks from its stream. Rolter subscribes on its
  // next tick after it serves the instance, and a batch published before the subscription
  // connects is lost; a prompt the engine has cached publishes nothing, so each try is new.
  let fresh = 100;
  await waitUntil(async () => (await kvEvents(rolter, identity(holder))) > 0 || (await direct(tokens(fresh++, 1)), false),
    { timeoutMs: 5000, intervalMs: 200, what: 'the holder\'s KV stream to reach rolter' });
  const seen = await kvEvents(rolter, identity(holder));
  await direct(kept);
  await waitUntil(async () => (await kvEvents(rolter, identity(holder))) > seen,
    { timeoutMs: 5000, what: 'the holder\'s blocks of the prompt to reach rolter' });

  const leftAt = rolter.log.text.length;
  await dns.setHosts(hostsFile([kHosts[0]]));
  await waitServed(rolter, 1);
  await rolter.log.waitFor(/kv events: vllm@http:\/\/127\.0\.0\.3:\d+: no longer subscribed/,
    { from: leftAt, timeoutMs: 5000 });
  // While it is away the engine keeps working: rolter, no longer subscribed, misses this batch.
  await direct(tokens(2, 2));
  await dns.setHosts(hostsFile([kHosts[0], kHosts[1]]));
  await waitServed(rolter, 2);
  // Its next batch shows rolter the gap, which the replay socket fills, and the stream is live
  // again. (A batch published before the new subscription connects is lost too: keep sending.)
  const back = await kvEvents(rolter, identity(holder));
  let seed = 3;
  await waitUntil(async () => {
    if ((await kvEvents(rolter, identity(holder))) > back && await kvLive(rolter, identity(holder))) return true;
    await direct(tokens(seed++, 1));
    return false;
  }, { timeoutMs: 10000, intervalMs: 100, what: 'the returned holder\'s stream to be live again' });

  const res = await complete(rolter, kept);
  assert.equal(res.status, 200, res.text);
  const decision = JSON.parse(res.headers.get('x-rolter-decision'));
  const holderName = 'vllm/sim-model#1';  // instances in address order: .2 is #0, .3 is #1
  const score = decision.candidates.find((c) => c.target === holderName)?.scores?.kv_residency ?? 0;
  assert.ok(score > 0, `the index from before the absence is used: ${JSON.stringify(decision)}`);
  assert.equal(decision.winner, holderName, JSON.stringify(decision));
  assert.equal(await requests(sims[kHosts[0]]), 0, 'the prompt went to the engine that holds it');
  // How: the stream resumed from the last batch the index reflected, and the batch it missed
  // while away came back through the replay socket.
  assert.match(rolter.log.text, /kv events: vllm@http:\/\/127\.0\.0\.3:\d+: gap after seq \d+ .*asking for a replay/);
  assert.match(rolter.log.text, /kv events: vllm@http:\/\/127\.0\.0\.3:\d+: gap repaired by replay/);
});
