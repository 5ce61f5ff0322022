// GET /metrics: valid Prometheus exposition with the SPEC §9 series that exist, after real traffic.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSim } from '../lib/sim.mjs';
import { startRolter, configFor } from '../lib/rolter.mjs';

let sim;
let rolter;

before(async () => {
  sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
  rolter = await startRolter({
    config: configFor({
      engines: sim.engines,
      routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }, { engine: 1, model: 'up' }] }],
    }),
  });
});

after(async () => {
  await rolter?.stop();
  await sim?.stop();
});

async function chat(stream = false) {
  const res = await fetch(`${rolter.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm', stream, messages: [{ role: 'user', content: 'count me' }], max_tokens: 2,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function scrape() {
  const res = await fetch(`${rolter.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return res.text();
}

function value(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('request, pick, latency, retry, park, instance and reload series', async () => {
  for (let i = 0; i < 4; i++) assert.equal(await chat(i % 2 === 1), 200);
  await sim.setFault(1, { refuse: true });
  for (let i = 0; i < 2; i++) assert.equal(await chat(), 200);
  await sim.clearFault(1);

  const text = await scrape();
  const served = ['engine-0/up', 'engine-1/up']
    .map((t) => value(text, `rolter_requests_total{code="2xx",route="m",target="${t}"}`) ?? 0);
  assert.equal(served[0] + served[1], 6);
  assert.equal(value(text, 'rolter_request_duration_seconds_count{route="m"}'), 6);
  assert.equal(value(text, 'rolter_ttft_seconds_count{route="m"}'), 6);
  assert.ok(value(text, 'rolter_retries_total{route="m"}') >= 1);
  assert.match(text, /rolter_parks_total\{instance="engine-1@http:\/\/127\.0\.0\.1:\d+",reason="refused"\} 1/);
  assert.match(text, /rolter_picks_total\{route="m",strategy="round_robin",target="engine-0\/up"\} \d+/);
  assert.match(text, /rolter_in_flight\{instance="engine-0@http:\/\/127\.0\.0\.1:\d+"\} 0/);
  assert.match(text, /rolter_breaker_state\{instance="engine-0@[^"]+"\} 0/);
  assert.match(text, /rolter_instance_healthy\{instance="engine-0@[^"]+"\} 1/);
  assert.match(text, /rolter_instance_parked\{instance="engine-1@[^"]+"\} 1/);
  assert.equal(value(text, 'rolter_tokens_total{direction="out",route="m"}'), 12, '6 answers x 2 tokens');
  assert.ok(value(text, 'rolter_tokens_total{direction="in",route="m"}') > 0);
  assert.equal(value(text, 'rolter_config_reloads_total{result="ok"}'), 1);
  assert.equal(value(text, 'rolter_config_version'), 1);
});

test('the exposition passes promtool check metrics', async () => {
  const text = await scrape();
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-metrics-'));
  const file = path.join(dir, 'metrics.txt');
  writeFileSync(file, text);
  try {
    const result = await new Promise((resolve) => {
      const child = execFile('/bin/sh', ['-c', `promtool check metrics < ${file}`], (error, stdout, stderr) =>
        resolve({ code: error ? error.code : 0, out: stdout + stderr }));
      child.stdin?.end();
    });
    // promtool exits 0 when the text parses; lint findings (e.g. naming advice) exit non-zero.
    assert.equal(result.code, 0, result.out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one JSON log line per request, without prompt text', async () => {
  const mark = rolter.log.text.length;
  assert.equal(await chat(true), 200);
  const line = (await rolter.log.waitFor(/^\{"ts_ms".*"event":"request".*$/m, { from: mark }))[0];
  const entry = JSON.parse(line);
  assert.equal(entry.route, 'm');
  assert.match(entry.target, /^engine-[01]\/up$/);
  assert.equal(entry.status, 200);
  assert.equal(entry.attempts, 1);
  assert.equal(entry.tokens_out, 2);
  assert.ok(entry.ttft_ms >= 0 && entry.duration_ms >= entry.ttft_ms);
  assert.doesNotMatch(rolter.log.text, /count me/, 'prompt text never reaches the log');
});
