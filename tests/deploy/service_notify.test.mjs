// rolter under systemd (SPEC §17): what each command tells the service manager through
// NOTIFY_SOCKET, and what its probes say while it drains. A helper binds the notify socket
// (tests/lib/notify.mjs); rolter runs as systemd would start a Type=notify unit.
//
//   READY=1      once the listeners are bound and the first snapshot is published
//   RELOADING=1  with MONOTONIC_USEC=, then READY=1, around a SIGHUP reload
//   STOPPING=1   when SIGTERM starts the drain; from then the metrics listener's /readyz
//                answers 503 while /healthz answers 200 until the process exits
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { configFor, startRolter } from '../lib/rolter.mjs';
import { startControlPlane, startGateway, tempDir } from '../lib/cluster.mjs';
import { postJson } from '../lib/http.mjs';
import { startNotifyListener } from '../lib/notify.mjs';
import { rmSync } from 'node:fs';

// An upstream whose streamed answer sends one chunk, then waits for release() before it ends:
// the gateway stays draining for as long as the test needs.
async function heldStreamUpstream() {
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content) => ({
        id: 'c', object: 'chat.completion.chunk', created: 0, model: 'up',
        choices: [{ index: 0, delta: { content }, finish_reason: null }],
      });
      res.write(`data: ${JSON.stringify(chunk('first'))}\n\n`);
      await released;
      res.write(`data: ${JSON.stringify(chunk('last'))}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    release,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// A GET on a connection of its own: a drain closes idle keep-alive connections, and a probe
// (a load balancer's, kubelet's) opens a new one each time.
function statusOf(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

test('rolter serve: READY=1 once serving, RELOADING=1/READY=1 around SIGHUP, STOPPING=1 as the drain begins', async (t) => {
  const notify = await startNotifyListener();
  t.after(() => notify.stop());
  const upstream = await heldStreamUpstream();
  t.after(() => upstream.close());
  const rolter = await startRolter({
    config: configFor({
      engines: [{ url: upstream.url }],
      routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }],
      server: { metrics_listen: '127.0.0.1:0', drain_timeout_ms: 20000 },
    }),
    env: { NOTIFY_SOCKET: notify.path },
  });
  t.after(() => rolter.stop());
  const metricsPort = Number(rolter.log.text.match(/metrics listening on http:\/\/127\.0\.0\.1:(\d+)/)[1]);
  const probes = `http://127.0.0.1:${metricsPort}`;

  const ready = await notify.waitFor(/^READY=1/);
  assert.equal(ready, 'READY=1\nSTATUS=serving');
  assert.equal(notify.messages[0], ready, 'READY=1 is the first message');
  // READY=1 came after the listeners were bound: both answer at once.
  assert.equal(await statusOf(`${rolter.url}/readyz`), 200);
  assert.equal(await statusOf(`${probes}/readyz`), 200);

  let mark = notify.messages.length;
  rolter.signal('SIGHUP');
  const reloading = await notify.waitFor(/^RELOADING=1/, { from: mark });
  assert.match(reloading, /^RELOADING=1\nMONOTONIC_USEC=\d+$/);
  await notify.waitFor(/^READY=1/, { from: notify.messages.indexOf(reloading) + 1 });
  await rolter.log.waitFor(/config reloaded \(SIGHUP\)/);

  // A stream in flight holds the drain open.
  const res = await postJson(`${rolter.url}/v1/chat/completions`,
    { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }, { timeoutMs: 30000 });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });

  mark = notify.messages.length;
  rolter.signal('SIGTERM');
  await notify.waitFor(/^STOPPING=1$/, { from: mark });
  await notify.waitFor(/^STATUS=draining$/, { from: mark });
  assert.equal(await statusOf(`${probes}/readyz`), 503, '/readyz fails from the moment the drain begins');
  assert.equal(await statusOf(`${probes}/healthz`), 200, '/healthz answers until the process exits');
  assert.ok(rolter.running(), 'still draining');

  upstream.release();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  assert.match(text, /data: \[DONE\]\n\n$/, 'the stream in flight finished');
  const { code } = await rolter.waitForExit({ timeoutMs: 10000 });
  assert.equal(code, 0);
  assert.ok(!notify.messages.slice(mark).some((m) => /^READY=1/.test(m)), 'no READY=1 after STOPPING=1');
});

test('rolter control-plane and rolter gateway: READY=1 once serving, STOPPING=1 on SIGTERM', async (t) => {
  const dir = tempDir('rolter-notify-cp-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ROLTER_ADMIN_TOKEN: 'adm', ROLTER_NODE_TOKEN: 'node' };

  const cpNotify = await startNotifyListener();
  t.after(() => cpNotify.stop());
  const cp = await startControlPlane({
    store: `sqlite:${dir}/rolter.db`, env: { ...env, NOTIFY_SOCKET: cpNotify.path },
  });
  t.after(() => cp.stop());
  assert.equal(await cpNotify.waitFor(/^READY=1/), 'READY=1\nSTATUS=serving');

  const gwNotify = await startNotifyListener();
  t.after(() => gwNotify.stop());
  const gw = await startGateway({ controlPlane: cp.url, nodeId: 'gw-1', env: { ...env, NOTIFY_SOCKET: gwNotify.path } });
  t.after(() => gw.stop());
  assert.equal(await gwNotify.waitFor(/^READY=1/), 'READY=1\nSTATUS=serving');
  assert.equal(await statusOf(`${gw.url}/healthz`), 200);

  for (const [proc, notify] of [[gw, gwNotify], [cp, cpNotify]]) {
    proc.signal('SIGTERM');
    await notify.waitFor(/^STOPPING=1$/);
    assert.equal((await proc.waitForExit({ timeoutMs: 10000 })).code, 0);
  }
});
