// Limits the gateway keeps under pressure (a connection cap, file descriptors, an accept loop that
// must not spin at EMFILE) and what it must never leak (/metrics to the world, upstream URLs and
// ports in error messages, an upstream's own auth error, secret-looking config values).
// Contract: /work/notes/http-contract.md items 7 and 9.
// Each test starts its own upstream and rolter processes, so no test depends on another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir, configFor } from '../lib/rolter.mjs';
import { fetchWithin, withDeadline } from '../lib/http.mjs';
import { startEchoUpstream } from '../lib/echo_upstream.mjs';
import { openRaw, exchange } from '../lib/raw_client.mjs';

const KEY = 'sk-limits-valid-3e4f5a6b';
const CLK_TCK = 100;  // Linux USER_HZ, the unit of utime/stime in /proc/<pid>/stat

// A fresh echo upstream for test t, closed when the test ends.
async function upstream(t) {
  const up = await startEchoUpstream();
  t.after(() => withDeadline(up.close(), 5000, 'the echo upstream to close'));
  return up;
}

// Like tests/lib/rolter.mjs's startRolter, plus: `ulimit` (arguments to sh's ulimit, applied
// before exec) and the port of a metrics_listen listener when one is configured. The main port
// is read from "listening on ..." lines not preceded by "metrics ". Stopped when test t ends
// (t.after, registered before the wait for its port), or earlier by rolter.stop().
async function spawnRolter(t, { config, env = {}, workers = 2, ulimit = null }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-limits-'));
  const configPath = path.join(dir, 'rolter.toml');
  writeFileSync(configPath, config);
  const bin = path.join(binDir, 'rolter');
  const args = ['serve', '--config', configPath, '--listen', '127.0.0.1:0', '--workers', String(workers)];
  const child = ulimit === null
    ? spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    // exec keeps the pid: child.pid is rolter's.
    : spawn('/bin/sh', ['-c', `ulimit ${ulimit}; exec "$0" "$@"`, bin, ...args],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = { text: '' };
  let waiters = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    log.text += d;
    if (process.env.ROLTER_TEST_VERBOSE) process.stderr.write(d);
    waiters = waiters.filter((w) => !w());
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  log.waitFor = (regex, { from = 0, timeoutMs = 10000 } = {}) => new Promise((resolve, reject) => {
    let timer;
    const check = () => {
      const m = log.text.slice(from).match(regex);
      if (m) { clearTimeout(timer); resolve(m); }
      return Boolean(m);
    };
    if (check()) return;
    timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== check);
      reject(new Error(`timed out waiting for ${regex} in rolter's log:\n${log.text}`));
    }, timeoutMs);
    waiters.push(check);
  });
  const rolter = {
    child, log, configPath,
    // Safe to call twice.
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // SIGKILL cannot be ignored; the deadline only guards against a lost exit event.
      await withDeadline(exited, 5000, 'rolter to exit after SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  t.after(() => rolter.stop());
  const failed = exited.then(({ code, signal }) => {
    throw new Error(`rolter exited (${code ?? signal}) before listening:\n${log.text}`);
  });
  const m = await Promise.race([log.waitFor(/(?<!metrics )listening on http:\/\/127\.0\.0\.1:(\d+)/), failed]);
  rolter.port = Number(m[1]);
  rolter.url = `http://127.0.0.1:${rolter.port}`;
  if (/metrics_listen/.test(config)) {
    const mm = await Promise.race([log.waitFor(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)/), failed]);
    rolter.metricsPort = Number(mm[1]);
  }
  failed.catch(() => {});
  return rolter;
}

function config(up, { server = '', extra = '' } = {}) {
  return configFor({ engines: [up], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] })
    .replace('[server]\n', `[server]\n${server}`) + extra;
}

const keysToml = `
[[keys]]
name = "ops"
key_env = "LIMITS_KEY"
`;

function chatRequest({ lines = [] } = {}) {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  return ['POST /v1/chat/completions HTTP/1.1', 'Host: x', 'Content-Type: application/json',
    `Content-Length: ${body.length}`, ...lines].join('\r\n') + '\r\n\r\n' + body;
}

const get = (p, lines = []) => [`GET ${p} HTTP/1.1`, 'Host: x', ...lines].join('\r\n') + '\r\n\r\n';

function metricSum(text, name) {
  return text.split('\n')
    .filter((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

function limitsOf(pid) {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  const [soft, hard] = line.slice('Max open files'.length).trim().split(/\s+/);
  return { soft, hard };
}

// utime + stime of the whole process, in seconds.
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;  // fields 14 and 15 of stat(5)
}

// ---- 7. Accept loop --------------------------------------------------------------------------

test('max_connections = 2: a third connection waits until one of two idle ones closes', async (t) => {
  const up = await upstream(t);
  const rolter = await spawnRolter(t, { config: config(up, { server: 'max_connections = 2\n' }) });
  const held = [];
  try {
    for (let i = 0; i < 2; i++) {
      const c = await openRaw(rolter.port);
      held.push(c);
      c.write(get('/healthz'));
      const [r] = await c.waitForResponses(1);
      assert.equal(r.status, 200);
    }
    const third = await openRaw(rolter.port);  // the kernel completes the handshake
    held.push(third);
    third.write(chatRequest());
    // The contract is about this NOT happening: a bounded negative wait.
    await assert.rejects(third.waitForResponses(1, { timeoutMs: 500 }), /not seen within 500 ms/,
      `the third connection was served while two were open:\n${third.text()}`);
    held[0].destroy();
    const responses = await third.waitForResponses(1, { timeoutMs: 5000 });
    assert.equal(responses[0].status, 200, third.text());
    // The other idle connection is still usable.
    held[1].write(get('/healthz'));
    const again = await held[1].waitForResponses(2);
    assert.equal(again[1].status, 200);
  } finally {
    for (const c of held) c.destroy();
    await rolter.stop();
  }
});

test('the soft open-files limit is raised to the hard limit', async (t) => {
  const mine = limitsOf(process.pid);
  assert.ok(mine.hard === 'unlimited' || Number(mine.hard) > 256, `this test needs a hard limit above 256: ${mine.hard}`);
  const up = await upstream(t);
  const rolter = await spawnRolter(t, { config: config(up), ulimit: '-Sn 256' });
  try {
    const limits = limitsOf(rolter.child.pid);
    assert.equal(limits.hard, mine.hard, 'rolter runs with the hard limit it was given');
    assert.equal(limits.soft, limits.hard, `soft ${limits.soft}, hard ${limits.hard}`);
  } finally {
    await rolter.stop();
  }
});

test('EMFILE: a connection flood does not make the accept loop spin, is counted, and passes', async (t) => {
  const up = await upstream(t);
  const rolter = await spawnRolter(t, { config: config(up), ulimit: '-n 64', workers: 1 });
  const flood = [];
  let keep;
  try {
    assert.equal(limitsOf(rolter.child.pid).soft, '64');
    // Opened before the flood: the way to read /metrics while no new connection is accepted.
    keep = await openRaw(rolter.port);
    keep.write(get('/metrics'));
    assert.equal((await keep.waitForResponses(1))[0].status, 200);

    await Promise.all(Array.from({ length: 100 }, () => new Promise((resolve, reject) => {
      const s = net.connect(rolter.port, '127.0.0.1');
      flood.push(s);
      s.on('error', () => {});
      s.once('connect', resolve);
      s.once('close', () => resolve());
      setTimeout(() => reject(new Error('flood connection not established within 5 s')), 5000).unref();
    })));

    // Measure CPU over a fixed 2 s window while the flood is held open.
    const cpuBefore = cpuSeconds(rolter.child.pid);
    await new Promise((r) => setTimeout(r, 2000));
    const cpu = cpuSeconds(rolter.child.pid) - cpuBefore;

    keep.write(get('/metrics'));
    const responses = await keep.waitForResponses(2, { timeoutMs: 5000 });
    const text = responses[1].body.toString();

    for (const s of flood) s.destroy();
    flood.length = 0;
    const served = await exchange(rolter.port, chatRequest({ lines: ['Connection: close'] }), { deadlineMs: 5000 });

    assert.ok(cpu < 0.5, `rolter used ${cpu.toFixed(2)} s of CPU in 2 s while out of file descriptors`);
    assert.ok(metricSum(text, 'rolter_accept_errors_total') > 0,
      `rolter_accept_errors_total: ${text.split('\n').filter((l) => l.includes('accept')).join('\n') || 'absent'}`);
    assert.equal(served.responses[0]?.status, 200, `after the flood: ${served.text}`);
  } finally {
    for (const s of flood) s.destroy();
    keep?.destroy();
    await rolter.stop();
  }
});

// ---- 9. /metrics access -------------------------------------------------------------------------

test('/metrics: open without keys; with [[keys]] it needs a valid key', async (t) => {
  const up = await upstream(t);
  const openGw = await spawnRolter(t, { config: config(up) });
  const keyed = await spawnRolter(t, { config: config(up, { extra: keysToml }), env: { LIMITS_KEY: KEY } });
  try {
    assert.equal((await fetchWithin(`${openGw.url}/metrics`)).status, 200);
    const cases = [
      { auth: undefined, status: 401 },
      { auth: 'Bearer sk-not-the-key', status: 401 },
      { auth: `Bearer ${KEY}`, status: 200 },
    ];
    for (const c of cases) {
      const res = await fetchWithin(`${keyed.url}/metrics`, { headers: c.auth ? { authorization: c.auth } : {} });
      const text = await res.text();
      assert.equal(res.status, c.status, `${c.auth ?? 'no key'}: ${text.slice(0, 200)}`);
      if (c.status === 200) assert.match(text, /^# (HELP|TYPE) rolter_/m);
      else assert.doesNotMatch(text, /rolter_requests_total/);
    }
  } finally {
    await openGw.stop();
    await keyed.stop();
  }
});

test('metrics_listen: /metrics, /healthz and /readyz on their own listener; 404 on the main one', async (t) => {
  const up = await upstream(t);
  const rolter = await spawnRolter(t, {
    config: config(up, { server: 'metrics_listen = "127.0.0.1:0"\n', extra: keysToml }), env: { LIMITS_KEY: KEY },
  });
  try {
    assert.ok(rolter.metricsPort > 0 && rolter.metricsPort !== rolter.port);
    const metricsUrl = `http://127.0.0.1:${rolter.metricsPort}`;
    const metrics = await fetchWithin(`${metricsUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^# (HELP|TYPE) rolter_/m);
    for (const p of ['/healthz', '/readyz']) {
      const res = await fetchWithin(`${metricsUrl}${p}`);
      await res.arrayBuffer();
      assert.equal(res.status, 200, p);
    }
    const main = await fetchWithin(`${rolter.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(main.status, 404, 'no /metrics on the main listener, even with a valid key');
    assert.doesNotMatch(await main.text(), /rolter_requests_total/);
  } finally {
    await rolter.stop();
  }
});

// ---- 9. Error messages name targets, never URLs -------------------------------------------------

async function freePort() {
  const s = net.createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

test('502 and 503 messages name the target and never an upstream URL or port', async (t) => {
  const garbage = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end('this is not http\r\n\r\n'));
  });
  await new Promise((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  t.after(() => withDeadline(new Promise((resolve) => garbage.close(() => resolve())), 5000, 'the garbage server to close'));
  const refusedPort = await freePort();
  const sickPort = await freePort();
  const ports = [garbage.address().port, refusedPort, sickPort];
  const toml = `[server]
listen = "127.0.0.1:0"
connect_timeout_ms = 1000
first_byte_timeout_ms = 2000

[health]
interval_ms = 100
timeout_ms = 200
unhealthy_threshold = 1

[[providers]]
name = "garbage"
base_url = "http://127.0.0.1:${ports[0]}"

[[providers]]
name = "refused"
base_url = "http://127.0.0.1:${ports[1]}"

[[providers]]
name = "sick"
base_url = "http://127.0.0.1:${ports[2]}"
health_path = "/health"

[[routes]]
name = "r-garbage"
[[routes.targets]]
provider = "garbage"
model = "g"

[[routes]]
name = "r-refused"
[[routes.targets]]
provider = "refused"
model = "f"

[[routes]]
name = "r-sick"
[[routes.targets]]
provider = "sick"
model = "s"
`;
  const rolter = await spawnRolter(t, { config: toml });
  const ask = async (model) => {
    const res = await fetchWithin(`${rolter.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
    });
    return { status: res.status, text: await res.text() };
  };
  const assertClean = (r, target) => {
    const message = JSON.parse(r.text).error.message;
    assert.ok(message.includes(target), `names ${target}: ${message}`);
    assert.ok(!r.text.includes('http://') && !r.text.includes('https://'), `no URL: ${r.text}`);
    for (const p of ports) assert.ok(!r.text.includes(String(p)), `no upstream port ${p}: ${r.text}`);
  };
  try {
    const garbageAnswer = await ask('r-garbage');
    const refusedAnswer = await ask('r-refused');
    // The health checker marks "sick" unhealthy within a few intervals: then it is a 503. Every
    // answer on the way (502 before that) must be as clean.
    const sickAnswers = [];
    const deadline = Date.now() + 5000;
    do {
      sickAnswers.push(await ask('r-sick'));
      if (sickAnswers.at(-1).status === 503) break;
      await new Promise((r) => setTimeout(r, 100));  // poll interval, not a correctness wait
    } while (Date.now() < deadline);

    assert.equal(garbageAnswer.status, 502, garbageAnswer.text);
    assert.equal(refusedAnswer.status, 502, refusedAnswer.text);
    assert.equal(sickAnswers.at(-1).status, 503, `the unhealthy target answers 503: ${sickAnswers.at(-1).text}`);
    assertClean(garbageAnswer, 'garbage/g');
    assertClean(refusedAnswer, 'refused/f');
    for (const a of sickAnswers) {
      assert.ok(a.status === 502 || a.status === 503, a.text);
      assertClean(a, 'sick/s');
    }
  } finally {
    await rolter.stop();
  }
});

const upstreamAuthFailures = [401, 403];

for (const status of upstreamAuthFailures) {
  test(`an upstream ${status} becomes 502 upstream_auth_failed naming the provider, not its body`, async (t) => {
    const secretish = `Incorrect API key provided: sk-upstream-${status}-9d8c7b6a`;
    const up = await upstream(t);
    const rolter = await spawnRolter(t, { config: config(up) });
    up.setReply({ status, body: { error: { message: secretish, type: 'invalid_request_error', code: 'invalid_api_key' } } });
    try {
      const logFrom = rolter.log.text.length;
      const got = await exchange(rolter.port, chatRequest({ lines: ['Connection: close'] }));
      const [response] = got.responses;
      assert.equal(response?.status, 502, got.text);
      const text = response.body.toString();
      const error = JSON.parse(text).error;
      assert.equal(error.code, 'upstream_auth_failed', text);
      assert.match(error.message, /engine-0/);
      assert.match(error.message, new RegExp(`\\(${status}\\)`));
      assert.ok(!text.includes('Incorrect API key') && !text.includes('sk-upstream'), `the upstream's body leaked: ${text}`);
      await rolter.log.waitFor(new RegExp(secretish), { from: logFrom });
    } finally {
      up.setReply(null);
      await rolter.stop();
    }
  });
}

// ---- 9. `rolter check` never echoes secret-looking values --------------------------------------

const secretConfigs = [
  { name: 'api_key_env holding a key', key: 'api_key_env', secret: 'sk-live-0123456789abcdef0123',
    toml: (up, s) => config(up).replace('name = "engine-0"\n', `name = "engine-0"\napi_key_env = "${s}"\n`) },
  { name: 'key_env holding a key', key: 'key_env', secret: 'sk-proj-abcdef0123456789abcdef01',
    toml: (up, s) => config(up, { extra: `\n[[keys]]\nname = "k"\nkey_env = "${s}"\n` }) },
  { name: 'base_url with a password', key: 'base_url', secret: 's3cretpw',
    toml: (up, s) => config(up).replace(/base_url = "[^"]*"/, `base_url = "http://user:${s}@host:bad"`) },
];

for (const c of secretConfigs) {
  test(`rolter check: ${c.name} is an error that does not print the value`, async (t) => {
    const up = await upstream(t);
    const dir = mkdtempSync(path.join(tmpdir(), 'rolter-check-'));
    try {
      const file = path.join(dir, 'rolter.toml');
      writeFileSync(file, c.toml(up, c.secret));
      const { code, output } = await new Promise((resolve) => {
        execFile(path.join(binDir, 'rolter'), ['check', '--config', file], { timeout: 10000 },
          (error, stdout, stderr) => resolve({ code: error ? error.code : 0, output: stdout + stderr }));
      });
      assert.equal(code, 1, `exit code; output:\n${output}`);
      assert.match(output, new RegExp(c.key), 'the error names the key');
      assert.ok(!output.includes(c.secret), `the secret is printed:\n${output}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
