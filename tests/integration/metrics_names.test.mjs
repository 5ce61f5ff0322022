// The /metrics surface as monitoring sees it (docs/metrics.md): a gateway node following a
// control plane, in front of rolter-sim engines with KV events, engine /metrics, LMCache
// occupancy, a failing engine, a fallback route, keys with limits and streamed answers. Its
// exposition and the control plane's pass `promtool check metrics`; the alert rules pass
// `promtool check rules`; every expression of the Grafana dashboard is valid PromQL; and every
// metric the dashboard and the rules read is one of the series those processes export.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSim } from '../lib/sim.mjs';
import { startControlPlane, startGateway, tempDir } from '../lib/cluster.mjs';
import { stopSim } from '../lib/rolter.mjs';
import { chat, fetchWithin, settle, waitUntil } from '../lib/http.mjs';
import { promtool } from '../lib/metrics.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dashboardPath = path.join(repoRoot, 'deploy', 'grafana', 'rolter.json');
const rulesPath = path.join(repoRoot, 'deploy', 'prometheus', 'rolter-rules.yaml');

const ADMIN = 'adm-' + 'm'.repeat(24);
const NODE = 'node-' + 'n'.repeat(24);
const CLIENT_KEY = 'sk-client-' + 'c'.repeat(20);
const SLOW_KEY = 'sk-slow-' + 's'.repeat(20);
const env = { ROLTER_ADMIN_TOKEN: ADMIN, ROLTER_NODE_TOKEN: NODE, NAMES_CLIENT_KEY: CLIENT_KEY, NAMES_SLOW_KEY: SLOW_KEY };

function fleetConfig(sim) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n\n';
  toml += '[breaker]\nfailure_threshold = 1\nopen_ms = 60000\n\n';
  sim.engines.forEach((e, i) => {
    toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${e.url}"\n` +
      'load_source = "engine_metrics"\nmetrics_interval_ms = 100\ntokenize = "engine"\n' +
      `lmcache = { endpoint = "${e.url}/occupancy", refresh_secs = 1, stale_secs = 3 }\n` +
      `kv_events = { endpoint = "tcp://127.0.0.1:${e.kv_port}" }\n\n`;
  });
  toml += '[[routes]]\nname = "m"\nstrategy = "round_robin"\n' +
    'targets = [{provider = "engine-0", model = "up"}, {provider = "engine-1", model = "up"}]\n\n';
  toml += '[[routes]]\nname = "f"\nfallbacks = ["m"]\ntargets = [{provider = "engine-1", model = "up"}]\n\n';
  toml += '[[keys]]\nname = "client"\nkey_env = "NAMES_CLIENT_KEY"\n\n';
  toml += '[[keys]]\nname = "slow"\nkey_env = "NAMES_SLOW_KEY"\nrpm = 1\nburst = 1\n';
  return toml;
}

const auth = (key) => ({ authorization: `Bearer ${key}` });

async function scrape(url, key) {
  const r = await settle(await fetchWithin(`${url}/metrics`, { headers: key ? auth(key) : {} }));
  assert.equal(r.status, 200, r.text);
  return r.text;
}

// The metric names an exposition has samples of (histograms under their own name).
function exported(text) {
  const names = new Set();
  const histograms = new Set();
  for (const line of text.split('\n')) {
    const type = line.match(/^# TYPE (\S+) (\S+)/);
    if (type) {
      if (type[2] === 'histogram') histograms.add(type[1]);
      continue;
    }
    const sample = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/);
    if (!sample) continue;
    const base = sample[1].replace(/_(bucket|sum|count)$/, '');
    names.add(histograms.has(base) ? base : sample[1]);
  }
  return names;
}

// The rolter_* and process_* metric names a PromQL expression reads: identifiers outside label
// matchers and strings, a histogram's _bucket, _sum and _count named by their base. Recording
// rule names (with a colon) and functions are not metrics of rolter's.
function metricsOf(expr) {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}');
  const names = new Set();
  for (const [id] of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    if (id.includes(':') || !/^(rolter|process)_/.test(id)) continue;
    names.add(id.replace(/_(bucket|sum|count)$/, ''));
  }
  return names;
}

// Every PromQL expression of the dashboard: its panels' targets and its templating queries.
function dashboardExpressions() {
  const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8'));
  const out = [];
  const panels = (list) => {
    for (const p of list ?? []) {
      for (const t of p.targets ?? []) if (t.expr) out.push(t.expr);
      panels(p.panels);
    }
  };
  panels(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    const m = v.type === 'query' && q?.match(/^label_values\((.*),\s*\w+\)$/);
    if (m) out.push(m[1]);
  }
  return out;
}

// The `expr:` values of the rules file: inline, or a block scalar (`|` or `>`) of the lines
// indented deeper than the key. Enough YAML for this file; promtool checks the rest.
function ruleExpressions() {
  const lines = readFileSync(rulesPath, 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^(\s*)(?:- )?expr:\s*(.*)$/);
    if (!m) continue;
    if (!/^[|>]/.test(m[2])) {
      out.push(m[2]);
      continue;
    }
    const body = [];
    while (i + 1 < lines.length && (lines[i + 1].trim() === '' || lines[i + 1].search(/\S/) > m[1].length)) {
      body.push(lines[++i].trim());
    }
    out.push(body.join(' '));
  }
  return out;
}

function runPromtool(args) {
  return new Promise((resolve) => {
    execFile('promtool', args, { timeout: 20000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? error.signal) : 0, out: stdout + stderr }));
  });
}

// What the fleet's exposition does not show yet, of what the tests need.
function waitingFor(text) {
  const wanted = {
    'a fresh engine scrape': /^rolter_engine_load_fresh\{endpoint="engine-0@[^"]+"\} 1$/m,
    'a live KV stream': /^rolter_kv_events_state\{endpoint="engine-0@[^"]+",state="live"\} 1$/m,
    'an LMCache occupancy': /^rolter_lmcache_occupancy_ratio\{endpoint="engine-0@[^"]+"\} [0-9]/m,
    'an open breaker': /^rolter_breaker_state\{endpoint="engine-1@[^"]+",state="open"\} 1$/m,
  };
  return Object.entries(wanted).filter(([, re]) => !re.test(text)).map(([what]) => what);
}

describe('metrics as monitoring reads them', () => {
  let sim; let cp; let gw;
  const texts = {};

  before(async () => {
    sim = await startSim({ engines: 2, args: ['--time-scale', '1', '--kv-port', '0'] });
    const store = `sqlite:${path.join(tempDir('rolter-names-'), 'rolter.db')}`;
    cp = await startControlPlane({ config: fleetConfig(sim), store, env });
    gw = await startGateway({ controlPlane: cp.url, nodeId: 'gw-names', stateDir: tempDir(), env });
    // Engine 1 fails every request: its breaker opens, route f falls back to m.
    await sim.setFault(1, { error_rate: 1, error_status: 500 });
    const client = { headers: auth(CLIENT_KEY) };
    for (let i = 0; i < 4; i++) {
      const r = await chat(gw.url, 'm', { ...client, content: `the same prompt ${i % 2}`, maxTokens: 8, stream: i % 2 === 0 });
      assert.equal(r.status, 200, r.text);
    }
    await chat(gw.url, 'f', client);  // every candidate out: it falls back to m
    const slow = [];
    for (let i = 0; i < 3; i++) slow.push((await chat(gw.url, 'm', { headers: auth(SLOW_KEY) })).status);
    assert.equal(slow.at(-1), 429, `rpm = 1 refuses the third at once: ${slow}`);
    assert.equal((await chat(gw.url, 'm', { headers: auth('sk-nobody') })).status, 401);
    // The background services have reported: a scrape of each engine, a poll, a KV stream (whose
    // first events may go out before the subscription connects: more traffic until it is live).
    await waitUntil(async () => {
      texts.gateway = await scrape(gw.url, CLIENT_KEY);
      // A prompt of several KV blocks: the engine publishes the blocks it stores.
      if (!/state="live"\} 1$/m.test(texts.gateway)) await chat(gw.url, 'm', { ...client, content: 'more words '.repeat(64) });
      return waitingFor(texts.gateway).length === 0;
    }, { timeoutMs: 15000, intervalMs: 100, what: 'engine metrics, KV events, LMCache and the breaker on /metrics' })
      .catch((err) => { throw new Error(`${err.message}; still waiting for ${waitingFor(texts.gateway)}\n${texts.gateway}`); });
    texts.controlPlane = await scrape(cp.url);
  });

  after(async () => {
    await gw?.stop();
    await cp?.stop();
    if (sim) await stopSim(sim);
  });

  test('the expositions pass promtool check metrics', async (t) => {
    // Streams of 8 tokens: their gaps are on the inter-token histogram.
    assert.match(texts.gateway, /^rolter_inter_token_seconds_count\{route="m"\} [1-9]/m);
    assert.match(texts.gateway, /^rolter_requests_by_code_total\{code="200",route="m"\} [1-9]/m);
    assert.match(texts.gateway, /^rolter_limit_refusals_total\{reason="rate_limit"\} [1-9]/m);
    for (const [what, text] of Object.entries(texts)) {
      const result = await promtool(t, text);
      assert.equal(result.code, 0, `${what}: ${result.out}`);
    }
  });

  test('the alert rules pass promtool check rules', async () => {
    const result = await runPromtool(['check', 'rules', rulesPath]);
    assert.equal(result.code, 0, result.out);
  });

  test('every dashboard expression is valid PromQL', async (t) => {
    // promtool parses expressions only inside rules: each becomes one, with Grafana's variables
    // given values.
    const dir = mkdtempSync(path.join(tmpdir(), 'rolter-dashboard-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const exprs = dashboardExpressions();
    assert.ok(exprs.length >= 30, `${exprs.length} expressions`);
    const rules = exprs.map((e, i) => `      - record: dashboard_expr_${i}\n        expr: ${JSON.stringify(
      e.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*').replaceAll('$route', '.*'))}\n`);
    const file = path.join(dir, 'dashboard-rules.yaml');
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('')}`);
    const result = await runPromtool(['check', 'rules', file]);
    assert.equal(result.code, 0, result.out);
  });

  test('every metric the dashboard and the rules read is exported', () => {
    const have = new Set([...exported(texts.gateway), ...exported(texts.controlPlane)]);
    const missing = [];
    for (const [source, exprs] of [['dashboard', dashboardExpressions()], ['rules', ruleExpressions()]]) {
      assert.ok(exprs.length > 0, source);
      for (const expr of exprs) {
        for (const name of metricsOf(expr)) if (!have.has(name)) missing.push(`${source}: ${name} (in ${expr})`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('the dashboard and the rules cover what an operator watches', () => {
    const read = (exprs) => new Set(exprs.flatMap((e) => [...metricsOf(e)]));
    const dashboard = read(dashboardExpressions());
    const covers = {
      traffic: ['rolter_requests_total', 'rolter_tokens_total'],
      errors: ['rolter_requests_by_code_total', 'rolter_retries_total'],
      'time to first token': ['rolter_ttft_seconds'],
      'inter-token latency': ['rolter_inter_token_seconds'],
      'engine cache hit ratio': ['rolter_engine_prefix_cache_hits_total', 'rolter_engine_prefix_cache_queries_total'],
      'per-endpoint load': ['rolter_in_flight', 'rolter_engine_load'],
      'breaker and park state': ['rolter_breaker_state', 'rolter_endpoint_parked'],
      limits: ['rolter_limit_refusals_total'],
    };
    for (const [area, names] of Object.entries(covers)) {
      for (const name of names) assert.ok(dashboard.has(name), `the dashboard shows ${area}: ${name}`);
    }
    const rulesText = readFileSync(rulesPath, 'utf8');
    const rules = read(ruleExpressions());
    const alerts = {
      RolterErrorBudgetBurnFast: 'rolter_requests_total',
      RolterRouteAllCandidatesOut: 'rolter_route_endpoints_available',
      RolterControlPlaneUnreachable: 'rolter_control_plane_up',
      RolterKvEventStreamStale: 'rolter_kv_events_state',
      RolterEngineScrapeStalled: 'rolter_engine_load_fresh',
    };
    for (const [alert, metric] of Object.entries(alerts)) {
      assert.match(rulesText, new RegExp(`- alert: ${alert}\\n`), alert);
      assert.ok(rules.has(metric), `${alert} reads ${metric}`);
    }
    assert.match(rulesText, /- alert: RolterScrapeDown\n\s+expr: up\{/);
  });
});
