// A soak: closed-loop clients against rolter in front of a rolter-sim fleet for a long while,
// watching rolter's resident memory and every answer. Each client sends one request after
// another on a keep-alive connection: 70% streamed and read to the end, 10% streamed and dropped
// after the first event (the client leaves mid-answer), 20% plain JSON.
//
// A client error is any answer that is not a 200, a stream without its [DONE], a JSON answer
// without choices, or a connection that failed when the client did not drop it. RSS is sampled
// every --sample-s seconds; after the warm-up (the first --warmup-s seconds) it must stay within
// --rss-band-mb of its first sample. Prints a table of the samples and a JSON summary on the
// last line; exits 1 on any client error or when RSS left the band.
//
// Usage: node tests/bench/soak.mjs [--minutes 10] [--clients 48] [--workers 1] [--engines 4]
//                                  [--warmup-s 60] [--sample-s 30] [--rss-band-mb 2]
//                                  [--seconds S (overrides --minutes)]
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { configFor, startRolter, stopSim } from '../lib/rolter.mjs';
import { startSim } from '../lib/sim.mjs';

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const SECONDS = option('--seconds', option('--minutes', 10) * 60);
const CLIENTS = option('--clients', 48);
const WORKERS = option('--workers', 1);
const ENGINES = option('--engines', 4);
const WARMUP_S = option('--warmup-s', Math.min(60, SECONDS / 4));
const SAMPLE_S = option('--sample-s', Math.min(30, SECONDS / 8));
const RSS_BAND_MB = option('--rss-band-mb', 2);

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

// A small seeded generator, so two runs send the same mix.
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const counts = { sent: 0, streamed: 0, plain: 0, dropped: 0, errors: 0 };
const firstErrors = [];
function fail(what) {
  counts.errors += 1;
  if (firstErrors.length < 10) firstErrors.push(what);
}

// One request; resolves when it is over, whatever happened.
function once(port, agent, kind, n) {
  const stream = kind !== 'plain';
  const body = JSON.stringify({
    model: 'soak', stream, max_tokens: 16,
    messages: [{ role: 'user', content: `soak request ${n}` }],
  });
  return new Promise((resolve) => {
    let dropped = false;
    const req = http.request({
      host: '127.0.0.1', port, agent, method: 'POST', path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: 30000,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
        if (kind === 'drop' && !dropped && text.includes('data:')) {
          dropped = true;
          counts.dropped += 1;
          req.destroy();
          resolve();
        }
      });
      res.on('end', () => {
        if (dropped) return;
        if (res.statusCode !== 200) fail(`status ${res.statusCode}: ${text.slice(0, 200)}`);
        else if (stream && !text.includes('data: [DONE]')) fail(`a stream without [DONE]: ${text.slice(-200)}`);
        else if (!stream && !text.includes('"choices"')) fail(`an answer without choices: ${text.slice(0, 200)}`);
        else if (stream) counts.streamed += 1;
        else counts.plain += 1;
        resolve();
      });
      res.on('error', (err) => {
        if (!dropped) fail(`response: ${err.message}`);
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (err) => {
      if (!dropped) {
        fail(`request: ${err.message}`);
        resolve();
      }
    });
    req.end(body);
    counts.sent += 1;
  });
}

async function client(port, index, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const next = random(1000 + index);
  let n = 0;
  while (Date.now() < until) {
    const r = next();
    const kind = r < 0.7 ? 'stream' : r < 0.8 ? 'drop' : 'plain';
    await once(port, agent, kind, `${index}-${n++}`);
  }
  agent.destroy();
}

const sim = await startSim({ engines: ENGINES, args: ['--ttft-ms', '5', '--token-ms', '2'] });
const rolter = await startRolter({
  workers: WORKERS,
  args: ['--no-access-log'],
  config: configFor({
    engines: sim.engines,
    routes: [{ name: 'soak', strategy: 'power_of_two', targets: sim.engines.map((_, i) => ({ engine: i, model: 'soak' })) }],
  }),
}).catch(async (err) => {
  await stopSim(sim);
  throw err;
});
const pid = rolter.child.pid;
const samples = [];
const start = Date.now();
const until = start + SECONDS * 1000;
console.error(`soak: ${CLIENTS} clients for ${SECONDS} s through rolter (${WORKERS} worker(s)) to ${ENGINES} sim engines`);
const sampler = setInterval(() => {
  const s = { at: Math.round((Date.now() - start) / 1000), rssMb: rssMb(pid), sent: counts.sent, errors: counts.errors };
  samples.push(s);
  console.error(`  ${s.at} s: RSS ${s.rssMb.toFixed(1)} MB, ${s.sent} requests, ${s.errors} errors`);
}, SAMPLE_S * 1000);
try {
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(rolter.port, i, until)));
} finally {
  clearInterval(sampler);
}
const alive = rolter.running();
const finalRss = alive ? rssMb(pid) : NaN;
await rolter.stop();
await stopSim(sim);

const steady = samples.filter((s) => s.at >= WARMUP_S);
const base = steady[0]?.rssMb ?? finalRss;
const rssValues = [...steady.map((s) => s.rssMb), finalRss];
const drift = Math.max(...rssValues.map((v) => Math.abs(v - base)));
console.log('| Seconds | RSS (MB) | Requests | Client errors |');
console.log('|---|---|---|---|');
for (const s of samples) console.log(`| ${s.at} | ${s.rssMb.toFixed(1)} | ${s.sent} | ${s.errors} |`);
const summary = {
  seconds: SECONDS, clients: CLIENTS, workers: WORKERS, ...counts, rolterAlive: alive,
  rssAfterWarmupMb: Number(base.toFixed(2)), rssFinalMb: Number(finalRss.toFixed(2)),
  rssMaxDriftMb: Number(drift.toFixed(2)), rssBandMb: RSS_BAND_MB, firstErrors,
};
console.log(JSON.stringify(summary));
const ok = alive && counts.errors === 0 && drift <= RSS_BAND_MB;
process.exit(ok ? 0 : 1);
