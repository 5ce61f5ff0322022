// Starts a rolter-sim fleet for a test and talks to its control API.
//
//   const sim = await startSim({ engines: 2, args: ['--time-scale', '0'] });
//   await fetch(`${sim.engines[0].url}/v1/models`);
//   await sim.setFault(1, { refuse: true });
//   await sim.stop();
//
// The binary comes from $ROLTER_BIN_DIR (default <repo>/build/bin). Ports are always ephemeral;
// the control server is always on.
import { spawn } from 'node:child_process';

const repoRoot = new URL('../../', import.meta.url);

export function simBinary() {
  const dir = process.env.ROLTER_BIN_DIR ?? new URL('build/bin', repoRoot).pathname;
  return `${dir.replace(/\/$/, '')}/rolter-sim`;
}

// Every control-API call has a deadline: a simulator that stops answering fails the test.
const kControlDeadlineMs = 10000;
const withDeadline = (init = {}) => ({ ...init, signal: AbortSignal.timeout(kControlDeadlineMs) });

async function json(response) {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${response.url}: ${text}`);
  return JSON.parse(text);
}

// Spawns the simulator and resolves once it printed its ready line.
// `port` is engine 0's (0 = ephemeral); a host other than loopback goes in `args` (--host).
export async function startSim({ engines = 1, port = 0, args = [], startTimeoutMs = 10000 } = {}) {
  const child = spawn(
    simBinary(),
    ['--engines', String(engines), '--port', String(port), '--control-port', '0', '--exit-on-stdin-close', ...args],
    // stdin stays an open pipe: if this process dies, the simulator sees EOF and exits too.
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    if (process.env.ROLTER_SIM_LOG) process.stderr.write(chunk);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const ready = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rolter-sim did not start within ${startTimeoutMs} ms\n${stderr}`));
    }, startTimeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${simBinary()}: ${err.message}`));
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`rolter-sim exited (code ${code}, signal ${signal}) before it was ready\n${stderr}`));
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.slice(0, newline)));
      } catch (err) {
        reject(new Error(`bad ready line from rolter-sim: ${stdout.slice(0, newline)}`));
      }
    });
  });

  // The control server listens on the engines' host (--host).
  const controlUrl = `http://${new URL(ready.engines[0].url).hostname}:${ready.control_port}`;
  let stopped = false;
  return {
    engines: ready.engines,
    controlUrl,
    process: child,
    stderr: () => stderr,
    // Replaces engine i's faults (absent fields take their defaults); resolves to the new faults.
    setFault: (i, faults) =>
      fetch(`${controlUrl}/faults/${i}`, withDeadline({
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(faults),
      })).then(json),
    clearFault: (i) => fetch(`${controlUrl}/faults/${i}`, withDeadline({ method: 'DELETE' })).then(json),
    // Engine i's /sim/stats, read through the control server (works while i refuses).
    stats: (i) => fetch(`${controlUrl}/engines/${i}`, withDeadline()).then(json),
    allStats: () => fetch(`${controlUrl}/engines`, withDeadline()).then(json),
    reset: (i) =>
      fetch(i === undefined ? `${controlUrl}/reset` : `${controlUrl}/engines/${i}/reset`,
        withDeadline({ method: 'POST' })).then(json),
    // SIGTERM, then SIGKILL if the simulator has not exited within 5 s.
    async stop() {
      if (stopped) return exited;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        exited.finally(() => clearTimeout(timer));
      }
      return exited;
    },
  };
}

// A fresh simulator for test `t` (node:test's context), stopped when the test ends; the test then
// also checks that it exited cleanly on SIGTERM (code 0, no signal: stop() sends SIGKILL after 5 s,
// which fails that check).
export async function startSimFor(t, options) {
  const sim = await startSim(options);
  t.after(async () => {
    const deadline = new Promise((_, reject) => setTimeout(
      () => reject(new Error('rolter-sim did not exit within 10 s')), 10000).unref());
    const { code, signal } = await Promise.race([sim.stop(), deadline]);
    if (signal !== null || code !== 0) {
      throw new Error(`rolter-sim exited with code ${code}, signal ${signal}\n${sim.stderr()}`);
    }
  });
  return sim;
}

