// rolter-bench replay in HTTP mode: it spawns rolter-sim and rolter itself, replays a small
// synthetic workload through the gateway once per strategy and writes a JSON report.
//   ROLTER_BIN_DIR=build/bin node --test tests/bench/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir } from '../lib/rolter.mjs';

test('replay --spawn: a few hundred requests per strategy, no errors, a full report', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-bench-test-'));
  try {
    const json = path.join(dir, 'report.json');
    const svg = path.join(dir, 'chart.svg');
    const run = spawnSync(path.join(binDir, 'rolter-bench'), [
      'replay', '--spawn', '--bin-dir', binDir, '--synthetic',
      '--sessions', '60', '--turns', '4', '--output-tokens', '8', '--session-rate', '40',
      '--think-time-ms', '100', '--time-scale', '0.05', '--engines', '4',
      '--strategies', 'round_robin,consistent_hash,precise_cache_aware', '--json', json, '--svg', svg, '--quiet',
    ], { encoding: 'utf8', timeout: 120000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /\| consistent_hash \|/);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(report.mode, 'http');
    assert.equal(report.requests, 240);
    assert.ok(report.ideal_hit_ratio > 0.5, `ideal ${report.ideal_hit_ratio}`);
    assert.deepEqual(report.strategies.map((s) => s.strategy),
      ['round_robin', 'consistent_hash', 'precise_cache_aware']);
    for (const s of report.strategies) {
      assert.equal(s.errors, 0, s.strategy);
      assert.equal(s.requests, 240);
      assert.ok(s.hit_ratio >= 0 && s.hit_ratio <= 1);
      assert.ok(s.ttft_p50_ms > 0 && s.ttft_p99_ms >= s.ttft_p50_ms);
      // Which engine served each request comes from the sim's x-sim-engine header, relayed.
      assert.ok(s.window_imbalance_median >= 1 && s.window_imbalance_median <= 4,
        `${s.strategy}: window imbalance ${s.window_imbalance_median}`);
      // The median is of the per-window values listed beside it.
      const windows = [...s.window_imbalances].sort((a, b) => a - b);
      assert.ok(windows.length >= 1, `${s.strategy}: ${s.window_imbalances}`);
      const mid = Math.floor(windows.length / 2);
      const median = windows.length % 2 ? windows[mid] : (windows[mid - 1] + windows[mid]) / 2;
      assert.ok(Math.abs(median - s.window_imbalance_median) < 1e-9, `${s.strategy}: ${s.window_imbalances}`);
    }
    // Plain chat requests, tokenised by the engines (tokenize = "engine"), matched against the
    // engines' KV events: conversations stay where their blocks are.
    const byName = Object.fromEntries(report.strategies.map((s) => [s.strategy, s]));
    assert.ok(byName.precise_cache_aware.hit_ratio > byName.round_robin.hit_ratio * 1.3,
      `precise ${byName.precise_cache_aware.hit_ratio} vs round_robin ${byName.round_robin.hit_ratio}`);
    assert.match(readFileSync(svg, 'utf8'), /^<svg /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replay --spawn --nodes 2: requests are dealt to both nodes in turn, none lost', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-bench-test-'));
  try {
    const json = path.join(dir, 'report.json');
    const run = spawnSync(path.join(binDir, 'rolter-bench'), [
      'replay', '--spawn', '--nodes', '2', '--bin-dir', binDir, '--synthetic',
      '--sessions', '30', '--turns', '3', '--output-tokens', '8', '--session-rate', '40',
      '--think-time-ms', '100', '--time-scale', '0.05', '--engines', '4',
      '--strategies', 'round_robin,precise_cache_aware', '--json', json, '--quiet',
    ], { encoding: 'utf8', timeout: 120000 });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.match(report.fleet, /2 gateway nodes, dealt round-robin; engine_metrics load/);
    for (const s of report.strategies) {
      assert.equal(s.errors, 0, s.strategy);
      // 90 requests in trace order, alternately to each node.
      assert.deepEqual(s.served_per_gateway, [45, 45], s.strategy);
    }
    // Both nodes read every engine's KV events: the conversations' blocks are found whichever
    // node a turn reaches.
    const byName = Object.fromEntries(report.strategies.map((s) => [s.strategy, s]));
    assert.ok(byName.precise_cache_aware.hit_ratio > byName.round_robin.hit_ratio * 1.3,
      `precise ${byName.precise_cache_aware.hit_ratio} vs round_robin ${byName.round_robin.hit_ratio}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replay --nodes without --spawn is refused with a hint', () => {
  const run = spawnSync(path.join(binDir, 'rolter-bench'), [
    'replay', '--nodes', '3', '--synthetic', '--gateway', 'http://127.0.0.1:9',
  ], { encoding: 'utf8', timeout: 30000 });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /--nodes starts gateways and needs --spawn; .*--gateways/);
});

test('replay --spawn --tenants 3 --flow-control on: per-tenant rows whose counts add up', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-bench-test-'));
  try {
    const json = path.join(dir, 'report.json');
    const run = spawnSync(path.join(binDir, 'rolter-bench'), [
      'replay', '--spawn', '--bin-dir', binDir, '--synthetic',
      '--sessions', '40', '--turns', '3', '--output-tokens', '8', '--session-rate', '40',
      '--think-time-ms', '100', '--time-scale', '0.05', '--engines', '2',
      '--strategies', 'round_robin', '--tenants', '3', '--flow-control', 'on',
      '--max-in-flight-per-instance', '2', '--queue-max-requests', '16', '--queue-max-wait-ms', '2000',
      '--seed', '5', '--json', json,
    ], { encoding: 'utf8', timeout: 120000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /\| round_robin \| tenant-0 \| 1 \|/);
    assert.match(run.stdout, /\| round_robin \| tenant-2 \| 6 \|/);
    // Progress keeps its per-strategy line, with one line per tenant after it.
    assert.match(run.stderr, /\[round_robin\] done: .*\n  tenant-0 \(band 1\): sent \d+/);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.match(report.flow_control, /^on \(max_in_flight_per_instance 2, queue max_requests 16, max_wait_ms 2000\)$/);
    const [s] = report.strategies;
    assert.deepEqual(s.tenants.map((t) => [t.tenant, t.priority]),
      [['tenant-0', 1], ['tenant-1', 6], ['tenant-2', 6]]);
    let sent = 0, shed = 0;
    for (const t of s.tenants) {
      // Every request carried its tenant's key: none refused for it, none failed otherwise.
      assert.equal(t.errors, 0, t.tenant);
      assert.equal(t.served + t.shed, t.sent, t.tenant);
      assert.ok(t.sent > 0, t.tenant);
      assert.equal(t.shed_rate, t.shed / t.sent);
      if (t.served > 0) assert.ok(t.ttft_p50_ms > 0 && t.ttft_p99_ms >= t.ttft_p50_ms, t.tenant);
      sent += t.sent;
      shed += t.shed;
    }
    assert.equal(sent, 120);
    assert.equal(s.errors, shed);
    // Zipf-like shares: tenant 0 sends the most.
    assert.ok(s.tenants[0].sent > s.tenants[2].sent, JSON.stringify(s.tenants));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replay --tenants without --spawn is refused', () => {
  const run = spawnSync(path.join(binDir, 'rolter-bench'), [
    'replay', '--tenants', '3', '--synthetic', '--gateway', 'http://127.0.0.1:9',
  ], { encoding: 'utf8', timeout: 30000 });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /--tenants and --flow-control on configure the gateway and need --spawn/);
});
