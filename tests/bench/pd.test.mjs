// rolter-bench replay with prefill/decode disaggregation (--pd) and inter-token latency.
//   ROLTER_BIN_DIR=build/bin node --test tests/bench/pd.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir } from '../lib/rolter.mjs';

const bench = path.join(binDir, 'rolter-bench');
const tiny = ['--synthetic', '--sessions', '20', '--turns', '3', '--output-tokens', '8',
  '--session-rate', '40', '--think-time-ms', '100'];

function withDir(fn) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-bench-pd-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('--pd: bad forms are refused with a reason', () => {
  const cases = [
    [['--pd', '2'], /expected P:D/],
    [['--pd', '0:8'], /at least one prefill and one decode engine/],
    [['--pd', '2:6', '--engines', '4'], /P \+ D = 8 but --engines is 4/],
  ];
  for (const [args, reason] of cases) {
    const run = spawnSync(bench, ['replay', '--in-process', ...tiny, ...args],
      { encoding: 'utf8', timeout: 30000 });
    assert.equal(run.status, 2, args.join(' '));
    assert.match(run.stderr, reason, args.join(' '));
  }
});

test('--help explains the disaggregation options', () => {
  const run = spawnSync(bench, ['replay', '--help'], { encoding: 'utf8', timeout: 30000 });
  for (const flag of ['--pd', '--prefill-chunk-tokens', '--kv-transfer-ms-per-block',
    '--min-uncached-tokens']) {
    assert.match(run.stdout, new RegExp(`${flag}\\b`), flag);
  }
});

test('in-process --pd 1:3,2:2: an aggregated row, then one row per split, with ITL', () => withDir((dir) => {
  const json = path.join(dir, 'report.json');
  const run = spawnSync(bench, ['replay', '--in-process', ...tiny, '--engines', '4',
    '--strategies', 'precise_cache_aware', '--pd', '1:3,2:2', '--min-uncached-tokens', '256',
    '--json', json], { encoding: 'utf8', timeout: 60000 });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /\[pd 1:3 \(precise_cache_aware\/least load\)\] done: .*ITL p50/);
  const report = JSON.parse(readFileSync(json, 'utf8'));
  assert.deepEqual(report.strategies.map((s) => s.strategy), ['precise_cache_aware',
    'pd 1:3 (precise_cache_aware/least load)', 'pd 2:2 (precise_cache_aware/least load)']);
  // --pd turns chunked prefill on for every row, the aggregated one included.
  assert.match(report.fleet, /prefill chunk 512 tokens; pd runs: min_uncached_tokens 256/);
  const [agg, ...pd] = report.strategies;
  assert.equal(agg.split_requests, 0);
  for (const s of report.strategies) {
    assert.equal(s.errors, 0, s.strategy);
    assert.equal(s.requests, 60);
    // 8 tokens per answer: 7 intervals each.
    assert.equal(s.itl_samples, 60 * 7, s.strategy);
    assert.ok(s.itl_p50_ms > 0 && s.itl_p99_ms >= s.itl_p50_ms, s.strategy);
  }
  for (const s of pd) assert.ok(s.split_requests > 0 && s.split_requests <= 60, s.strategy);
}));

test('HTTP --spawn: ITL from the paced SSE chunks', () => withDir((dir) => {
  const json = path.join(dir, 'report.json');
  const run = spawnSync(bench, ['replay', '--spawn', '--bin-dir', binDir, ...tiny,
    '--engines', '2', '--strategies', 'round_robin', '--json', json, '--quiet'],
  { encoding: 'utf8', timeout: 120000 });
  assert.equal(run.status, 0, run.stderr);
  const [s] = JSON.parse(readFileSync(json, 'utf8')).strategies;
  assert.equal(s.errors, 0);
  assert.equal(s.itl_samples, 60 * 7);
  // The sim paces tokens decode_ms_base (5 ms) + 0.1 ms per running sequence apart.
  assert.ok(s.itl_p50_ms >= 4 && s.itl_p50_ms < 50, `ITL p50 ${s.itl_p50_ms}`);
  assert.ok(s.e2e_p50_ms > s.ttft_p50_ms + 7 * 4, `TTFT ${s.ttft_p50_ms}, E2E ${s.e2e_p50_ms}`);
}));

// The end-to-end run needs rolter-sim's prefill/decode engines and the gateway's disaggregated
// routes; a build without either skips it (and says which).
function pdSupport(dir) {
  const sim = spawnSync(path.join(binDir, 'rolter-sim'), ['--help'], { encoding: 'utf8' });
  if (!/--prefill-engines/.test(`${sim.stdout}${sim.stderr}`)) return 'rolter-sim has no --prefill-engines';
  const config = path.join(dir, 'probe.toml');
  writeFileSync(config, `
[[providers]]
name = "p"
role = "prefill"
base_url = "http://127.0.0.1:9"
[[providers]]
name = "d"
role = "decode"
base_url = "http://127.0.0.1:9"
[[routes]]
name = "m"
mode = "disaggregated"
min_uncached_tokens = 512
[routes.prefill]
strategy = "cache_aware"
targets = [{ provider = "p", model = "m" }]
[routes.decode]
targets = [{ provider = "d", model = "m" }]
`);
  const check = spawnSync(path.join(binDir, 'rolter'), ['check', '--config', config], { encoding: 'utf8' });
  if (check.status !== 0) return 'rolter check does not accept mode = "disaggregated"';
  return null;
}

test('HTTP --spawn --pd 1:1: the gateway splits long prompts through the prefill engine', (t) => withDir((dir) => {
  const missing = pdSupport(dir);
  if (missing) {
    t.skip(missing);
    return;
  }
  const json = path.join(dir, 'report.json');
  const run = spawnSync(bench, ['replay', '--spawn', '--bin-dir', binDir, ...tiny,
    '--system-prompt-blocks', '2', '--engines', '2', '--strategies', 'cache_aware', '--pd', '1:1',
    '--time-scale', '0.05', '--json', json, '--quiet'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(readFileSync(json, 'utf8'));
  assert.deepEqual(report.strategies.map((s) => s.strategy),
    ['cache_aware', 'pd 1:1 (cache_aware/least load)']);
  for (const s of report.strategies) {
    assert.equal(s.errors, 0, s.strategy);
    assert.equal(s.requests, 60);
    assert.ok(s.ttft_p50_ms > 0, s.strategy);
  }
  // The decode engine's own count of requests it served with a prefill engine's KV blocks.
  const [agg, pd] = report.strategies;
  assert.equal(agg.split_requests, 0);
  assert.ok(pd.split_requests > 0 && pd.split_requests <= 60, `split ${pd.split_requests}`);
}));
