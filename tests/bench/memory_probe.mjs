// rolter's resident memory in three states, for docs/benchmarks.md: idle after start, holding
// 10,000 idle keep-alive client connections, and relaying 1,000 concurrent streams from a slow
// upstream (one SSE event every 100 ms per stream) to clients that read them as they come.
// Run it with scripts/bench-memory (which raises the descriptor limit); it prints a Markdown
// table. Every wait has a deadline; the processes it starts are stopped at the end.
//
// Usage: node tests/bench/memory_probe.mjs [--connections N] [--streams N] [--workers N]
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { configFor, startRolter } from '../lib/rolter.mjs';
import { sleep, withDeadline } from '../lib/http.mjs';

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const CONNECTIONS = option('--connections', 10000);
const STREAMS = option('--streams', 1000);
const WORKERS = option('--workers', 1);
const EVENT_EVERY_MS = 100;

function rss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]) / 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

// An SSE upstream that sends one small event every EVENT_EVERY_MS, for as long as the client
// stays, and counts the streams it is serving.
async function slowUpstream() {
  const state = { active: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    state.active += 1;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'tok' } }] })}\n\n`;
    const timer = setInterval(() => res.write(event), EVENT_EVERY_MS);
    res.on('close', () => {
      clearInterval(timer);
      state.active -= 1;
    });
  });
  server.keepAliveTimeout = 600000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    state,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// Opens one client connection, sends `request` and resolves once `ready(text)` says so.
function openClient(port, request, ready) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let text = '';
    socket.setEncoding('latin1');
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      if (text.length < 4096) text += chunk;
      if (ready(text)) {
        socket.removeAllListeners('data');
        socket.on('data', () => {});  // keep reading, as a client would
        resolve(socket);
      }
    });
    socket.write(request);
  });
}

async function openMany(count, open) {
  const sockets = [];
  const batch = 250;
  for (let i = 0; i < count; i += batch) {
    const n = Math.min(batch, count - i);
    sockets.push(...await Promise.all(Array.from({ length: n }, open)));
  }
  return sockets;
}

const up = await slowUpstream();
// A fresh rolter for each state: freed memory stays in a process's heap, so one state must not
// inherit the last one's.
const startGateway = () => startRolter({
  config: configFor({
    engines: [{ url: up.url }],
    routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }],
    server: { idle_timeout_ms: 600000, max_connections: 0, upstream_timeout_ms: 600000 },
  }),
  workers: WORKERS,
  args: ['--no-access-log'],
});
const rows = [];
try {
  let rolter = await startGateway();
  await sleep(1000);
  rows.push(['idle, after start', rss(rolter.child.pid).rss, '']);

  const healthz = 'GET /healthz HTTP/1.1\r\nHost: rolter\r\n\r\n';
  const idle = await withDeadline(
    openMany(CONNECTIONS, () => openClient(rolter.port, healthz, (t) => /\r\n\r\n/.test(t))),
    120000, `${CONNECTIONS} keep-alive connections`);
  await sleep(1000);
  const withIdle = rss(rolter.child.pid).rss;
  rows.push([`${CONNECTIONS.toLocaleString('en')} idle keep-alive client connections`, withIdle,
    `${((withIdle - rows[0][1]) * 1024 / CONNECTIONS).toFixed(1)} KiB per connection`]);
  for (const s of idle) s.destroy();
  await rolter.stop();

  rolter = await startGateway();
  await sleep(1000);
  const before = rss(rolter.child.pid).rss;
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const post = `POST /v1/chat/completions HTTP/1.1\r\nHost: rolter\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const streams = await withDeadline(
    openMany(STREAMS, () => openClient(rolter.port, post, (t) => t.includes('data: '))),
    120000, `${STREAMS} streams`);
  await sleep(3000);
  const withStreams = rss(rolter.child.pid);
  rows.push([`${STREAMS.toLocaleString('en')} concurrent streams from a slow upstream`, withStreams.rss,
    `${up.state.active} upstream streams live; ${((withStreams.rss - before) * 1024 / STREAMS).toFixed(1)} KiB per stream`]);
  for (const s of streams) s.destroy();
  await rolter.stop();
} finally {
  await up.close();
}

console.log(`rolter memory, workers = ${WORKERS}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}\n`);
console.log('| state | RSS MB | note |\n|---|---:|---|');
for (const [state, mb, note] of rows) console.log(`| ${state} | ${mb.toFixed(1)} | ${note} |`);
