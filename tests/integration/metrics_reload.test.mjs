// Series of removed routes and endpoints leave /metrics after a reload (SPEC §17), once the last
// request pinned to the old configuration has ended; what stays keeps counting.
//
// rolter serves route `keep` over two rolter-sim engines and route `drop` over a scripted upstream
// that holds its answer until the test lets it go. A reload removes route `drop`, its provider
// and the second engine while a request to `drop` is in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRolter, stopSim } from '../lib/rolter.mjs';
import { startSim } from '../lib/sim.mjs';
import { chat, waitUntil } from '../lib/http.mjs';
import { chatCompletion } from '../lib/echo_upstream.mjs';
import { response, startRawUpstream } from '../lib/raw_upstream.mjs';
import { scrapeMetrics } from '../lib/metrics.mjs';

const engine = (name, url) =>
  `[[providers]]\nname = "${name}"\nbase_url = "${url}"\nload_source = "engine_metrics"\nmetrics_interval_ms = 100\n`;

function config({ sim, held, withDropped }) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n';
  toml += engine('engine-0', sim.engines[0].url);
  if (withDropped) {
    toml += engine('engine-1', sim.engines[1].url);
    toml += `[[providers]]\nname = "held"\nbase_url = "${held.url}"\n`;
  }
  toml += '[[routes]]\nname = "keep"\nstrategy = "round_robin"\n';
  toml += '[[routes.targets]]\nprovider = "engine-0"\nmodel = "up"\n';
  if (withDropped) {
    toml += '[[routes.targets]]\nprovider = "engine-1"\nmodel = "up"\n';
    toml += '[[routes]]\nname = "drop"\n[[routes.targets]]\nprovider = "held"\nmodel = "up"\n';
  }
  return toml;
}

// The value of the series written exactly `series` (name and labels), or undefined.
function value(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

// A response is counted once its last byte is written: a scrape right after the client read it
// may come first. Its duration is observed after its status is counted, so once a scrape shows a
// route's durations, the next one shows all of their statuses.
const finished = (route) => `rolter_request_duration_seconds_count{route="${route}"}`;

// The sample lines that name `what` (a label pair such as 'route="drop"', or an endpoint).
const linesWith = (text, what) => text.split('\n').filter((l) => !l.startsWith('#') && l.includes(what));

test('a reload removes the series of the routes and endpoints it removes, after their last request', async (t) => {
  const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  t.after(() => stopSim(sim));
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let answered = 0;
  const held = await startRawUpstream({
    async respond(req, ctx) {
      if (answered++ > 0) await gate;  // the first answer at once, the second when released
      ctx.write(response({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(chatCompletion('up')) }));
    },
  });
  t.after(() => held.close());
  const rolter = await startRolter({ config: config({ sim, held, withDropped: true }) });
  t.after(() => rolter.stop());

  for (let i = 0; i < 4; i++) assert.equal((await chat(rolter.url, 'keep')).status, 200);
  assert.equal((await chat(rolter.url, 'drop')).status, 200);
  const keptSeries = 'rolter_requests_total{code_class="2xx",route="keep",target="engine-0/up"}';
  let text = '';
  await waitUntil(async () => {
    text = await scrapeMetrics(rolter);
    return linesWith(text, 'rolter_engine_load_fresh{endpoint="engine-1@').length > 0 &&
      value(text, finished('keep')) === 4 && value(text, finished('drop')) === 1;
  }, { timeoutMs: 5000, what: 'engine-1 scraped and the five responses counted' });
  text = await scrapeMetrics(rolter);
  assert.equal(value(text, keptSeries), 2, text);
  assert.equal(value(text, 'rolter_requests_total{code_class="2xx",route="drop",target="held/up"}'), 1, text);
  assert.ok(linesWith(text, 'endpoint="engine-1@').length >= 8, 'engine-1 has its endpoint and engine series');
  assert.ok(linesWith(text, 'target="engine-1/up"').length > 0);

  // A request to `drop` waits on the upstream: it pins the configuration it started with.
  const pinned = chat(rolter.url, 'drop', { timeoutMs: 30000 });
  await waitUntil(() => held.requests.length === 2, { timeoutMs: 5000, what: 'the held request upstream' });

  rolter.writeConfig(config({ sim, held, withDropped: false }));
  rolter.signal('SIGHUP');
  await waitUntil(async () => value(await scrapeMetrics(rolter), 'rolter_config_version') === 2,
    { timeoutMs: 10000, what: 'the reload' });
  // Still counted into by the pinned request, so still there.
  text = await scrapeMetrics(rolter);
  assert.equal(value(text, 'rolter_retries_total{route="drop"}'), 0, text);
  assert.match(text, /^rolter_in_flight\{endpoint="held@[^"]+"\} 1$/m, text);

  release();
  assert.equal((await pinned).status, 200);
  await waitUntil(async () => {
    text = await scrapeMetrics(rolter);
    return ['route="drop"', 'held@', 'engine-1@', 'target="engine-1/up"'].every((w) => linesWith(text, w).length === 0);
  }, { timeoutMs: 5000, what: `the removed series to leave /metrics:\n${text}` });

  // What stays kept its counts across the reload, and goes on counting.
  assert.equal(value(text, keptSeries), 2, text);
  for (let i = 0; i < 3; i++) assert.equal((await chat(rolter.url, 'keep')).status, 200);
  await waitUntil(async () => value(await scrapeMetrics(rolter), finished('keep')) === 7,
    { timeoutMs: 5000, what: 'the three responses counted' });
  text = await scrapeMetrics(rolter);
  assert.equal(value(text, keptSeries), 5, text);
  assert.equal(value(text, 'rolter_route_endpoints{route="keep"}'), 1, text);
  // The kept engine is still scraped: its freshness series stays and turns (or stays) 1. A scrape
  // may miss its deadline on a busy machine, so the next one is waited for.
  await waitUntil(async () => /^rolter_engine_load_fresh\{endpoint="engine-0@[^"]+"\} 1$/m.test(text = await scrapeMetrics(rolter)),
    { timeoutMs: 5000, what: `engine-0 fresh after the reload:\n${text}` });
});
