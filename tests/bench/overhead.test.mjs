// rolter-bench overhead --quick: the same workload direct, through rolter, through an nginx proxy,
// through HAProxy when it is installed, and through a peer gateway (a small Node reverse proxy
// this test starts, reached by URL), with a JSON, Markdown and SVG report. Also the failure
// paths: a peer that does not answer, and bad arguments, exit 1 with a clear message.
//   ROLTER_BIN_DIR=build/bin node --test tests/bench/overhead.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir } from '../lib/rolter.mjs';
import { withDeadline } from '../lib/http.mjs';

const bench = path.join(binDir, 'rolter-bench');

// Whether `haproxy` is found where the bench looks (PATH, then /usr/sbin and /sbin): its path is
// measured when it is, and skipped with a note when it is not.
const searchPath = (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':');
const haproxyInstalled = [...searchPath, '/usr/sbin', '/sbin'].filter((d) => d !== '').some((dir) => {
  try {
    accessSync(path.join(dir, 'haproxy'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

// The peer: forwards POST /v1/chat/completions to the upstream named by the x-upstream header
// (the bench sends it, with {upstream} filled in), over kept-alive connections; GET /count says
// how many requests it forwarded. Prints {"port": N} once listening.
const peerSource = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
let forwarded = 0;
const hop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-connection', 'host', 'x-upstream']);
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ forwarded }));
    return;
  }
  const upstream = req.headers['x-upstream'];
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || !upstream) {
    res.statusCode = 404;
    res.end();
    return;
  }
  forwarded++;
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!hop.has(k)) headers[k] = v;
  const out = http.request(upstream + req.url, { method: 'POST', headers, agent }, (up) => {
    const back = {};
    for (const [k, v] of Object.entries(up.headers)) if (!hop.has(k)) back[k] = v;
    res.writeHead(up.statusCode, back);
    up.pipe(res);
  });
  out.on('error', () => { res.statusCode = 502; res.end(); });
  req.pipe(out);
});
server.keepAliveTimeout = 300000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
`;

function startPeer() {
  const child = spawn(process.execPath, ['-e', peerSource], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = withDeadline(new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)).port);
    });
    child.on('exit', (code) => reject(new Error(`the peer proxy exited (${code})`)));
  }), 10000, 'the peer proxy to listen');
  return { child, port };
}

// Runs rolter-bench without blocking this process (the peer may share its event loop's
// machine, never its thread), with a deadline.
function runBench(args, timeoutMs) {
  const child = spawn(bench, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return withDeadline(done, timeoutMs, `rolter-bench ${args.join(' ')}`).finally(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
}

test('overhead --quick: direct, rolter, nginx, haproxy if installed, a peer; a full report', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-overhead-test-'));
  const peer = startPeer();
  try {
    const port = await peer.port;
    const json = path.join(dir, 'report.json');
    const md = path.join(dir, 'report.md');
    const svg = path.join(dir, 'chart.svg');
    const run = await runBench(['overhead', '--quick', '--bin-dir', binDir,
      '--peer', `node=http://127.0.0.1:${port}`, '--peer-header', 'node:x-upstream={upstream}',
      '--json', json, '--markdown', md, '--svg', svg], 60000);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /\[round 1\/1\] rolter: latency at concurrency 1/);

    const report = JSON.parse(readFileSync(json, 'utf8'));
    const proxies = haproxyInstalled ? ['rolter', 'nginx', 'haproxy'] : ['rolter', 'nginx'];
    assert.deepEqual(report.paths.map((p) => p.name), ['direct', ...proxies, 'node']);
    const skipped = report.notes.filter((n) => /HAProxy proxy path was skipped/.test(n));
    if (haproxyInstalled) {
      assert.deepEqual(skipped, []);
    } else {
      assert.deepEqual(skipped, ['The HAProxy proxy path was skipped: haproxy was not found.']);
    }
    for (const p of report.paths) {
      assert.ok(p.latency_us.p50 > 0, `${p.name} latency p50 ${p.latency_us.p50}`);
      assert.ok(p.latency_us.p99 >= p.latency_us.p50, p.name);
      assert.ok(p.ttft_us.p50 > 0, `${p.name} TTFT p50 ${p.ttft_us.p50}`);
      assert.ok(p.throughput_rps.c32 > 0, `${p.name} c32 ${p.throughput_rps.c32}`);
      assert.ok(p.throughput_rps.c256 > 0, `${p.name} c256 ${p.throughput_rps.c256}`);
      assert.equal(p.errors.total, 0, `${p.name} errors ${JSON.stringify(p.errors)}`);
      assert.ok(p.cpu_s_per_10k_requests > 0, `${p.name} CPU ${p.cpu_s_per_10k_requests}`);
      assert.ok(p.peak_rss_mb > 0 && p.idle_rss_mb > 0, `${p.name} RSS`);
      assert.ok(p.rounds.length === 1 && p.rounds[0].probes.length >= 1, `${p.name} probes`);
    }
    const byName = Object.fromEntries(report.paths.map((p) => [p.name, p]));
    assert.deepEqual(byName.direct.added_latency_us, { p50: 0, p99: 0, p999: 0 });
    assert.deepEqual(byName.direct.added_ttft_us, { p50: 0, p99: 0, p999: 0 });
    // Added latency is the path minus direct at the same percentile.
    for (const name of [...proxies, 'node']) {
      const p = byName[name];
      for (const q of ['p50', 'p99', 'p999']) {
        assert.ok(Math.abs(p.added_latency_us[q] - (p.latency_us[q] - byName.direct.latency_us[q])) < 1e-6,
          `${name} added ${q}`);
      }
    }
    assert.equal(byName.rolter.workers, '1');
    assert.equal(byName.nginx.workers, '1');
    if (haproxyInstalled) {
      // One process (-db, no master), measured itself: its pid, its threads' CPU.
      assert.equal(byName.haproxy.kind, 'haproxy');
      assert.equal(byName.haproxy.workers, '1');
      assert.equal(byName.haproxy.measured_process, 'haproxy');
      assert.equal(byName.haproxy.pids.length, 1);
    }
    // Every proxy but nginx is compared with nginx round by round; one round here, so the
    // median, the lowest and the highest are that round's ratio.
    for (const name of [...proxies.filter((n) => n !== 'nginx'), 'node']) {
      const same = byName[name].vs_nginx_same_round;
      const cpu = byName[name].rounds[0].cpu_s_per_10k_requests / byName.nginx.rounds[0].cpu_s_per_10k_requests;
      const c32 = byName[name].rounds[0].throughput_rps.c32 / byName.nginx.rounds[0].throughput_rps.c32;
      assert.equal(same.cpu_per_request.rounds, 1, name);
      assert.ok(Math.abs(same.cpu_per_request.median - cpu) < 1e-9, `${name} CPU ratio`);
      assert.ok(Math.abs(same.throughput_c32.max - c32) < 1e-9, `${name} c=32 ratio`);
    }
    assert.equal(byName.nginx.vs_nginx_same_round, undefined);
    assert.equal(byName.direct.vs_nginx_same_round, undefined);
    assert.equal(byName.node.workers, 'as started');
    // The peer's CPU and RSS come from the process listening on its port: this test's child.
    assert.deepEqual(byName.node.pids, [peer.child.pid]);
    assert.equal(report.settings.quick, true);

    const count = await (await fetch(`http://127.0.0.1:${port}/count`)).json();
    assert.ok(count.forwarded >= 1000, `the peer forwarded ${count.forwarded} requests`);

    const markdown = readFileSync(md, 'utf8');
    assert.equal(markdown, run.stdout);
    assert.match(markdown, /\| rolter \| 1 \|/);
    if (haproxyInstalled) assert.match(markdown, /\| haproxy \| 1 \|/);
    assert.match(markdown, /^Machine: \d+ cores, /m);
    assert.match(markdown, /^Commit: /m);
    assert.match(markdown, /^Command: `.*rolter-bench overhead --quick/m);
    assert.match(markdown, /wrk drives the closed loop/);
    assert.match(markdown, /^Same-round ratios to nginx/m);
    assert.match(markdown, /^\| rolter \| \d+\.\d\d \(\d+\.\d\d to \d+\.\d\d\) \| \d+\.\d\d \(/m);
    assert.match(readFileSync(svg, 'utf8'), /^<svg /);
  } finally {
    peer.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

// --no-nginx skips the nginx proxy path only: nginx still serves the canned upstream.
// --flow-control adds rolter with a bound it never reaches.
test('overhead --quick --no-nginx --no-haproxy --flow-control: direct, rolter and rolter with flow control', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-overhead-test-'));
  try {
    const json = path.join(dir, 'report.json');
    const run = await runBench(['overhead', '--quick', '--quiet', '--bin-dir', binDir, '--no-nginx',
      '--no-haproxy', '--flow-control', '--json', json], 60000);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.deepEqual(report.paths.map((p) => p.name), ['direct', 'rolter', 'rolter-flow-control']);
    assert.ok(report.notes.includes('The nginx proxy path was skipped (--no-nginx).'), JSON.stringify(report.notes));
    assert.match(report.upstream, /^nginx `return 200`/);
    for (const p of report.paths) {
      assert.equal(p.errors.total, 0, `${p.name} errors ${JSON.stringify(p.errors)}`);
      assert.ok(p.throughput_rps.c32 > 0, `${p.name} c32 ${p.throughput_rps.c32}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('overhead: a peer that does not answer fails the run, naming the peer', async () => {
  const run = await runBench(['overhead', '--quick', '--quiet', '--bin-dir', binDir,
    '--peer', 'bad=http://127.0.0.1:1'], 30000);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /peer "bad" \(http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions\) does not answer/);
  assert.match(run.stderr, /refused/i);
  assert.equal(run.stdout, '');
});

test('overhead: bad arguments exit 1 with a message', async () => {
  const cases = [
    [['--rounds', '0'], /--rounds must be at least 1/],
    [['--peer', 'nourl'], /expected NAME=URL/],
    [['--peer-header', 'ghost:x=1'], /no --peer named "ghost"/],
    [['--no-such-option'], /no-such-option/],
    [['--bin-dir', '/nonexistent'], /rolter not found at \/nonexistent\/rolter/],
    [['--wrk', '/nonexistent/wrk'], /wrk not found/],
  ];
  for (const [args, message] of cases) {
    const bin = args.includes('--bin-dir') ? [] : ['--bin-dir', binDir];
    const run = await runBench(['overhead', '--quick', '--quiet', ...bin, ...args], 15000);
    assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, args.join(' '));
  }
});
