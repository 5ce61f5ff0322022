// Starts a real `rolter serve` process on loopback for tests, with a config written to a fresh
// temporary directory, and waits until it listens (it binds port 0 and logs the port); builds the
// rolter.toml for a set of engines.
//
//   const rolter = await startRolter({ config: configFor({
//     engines: sim.engines,
//     routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }, { engine: 1, model: 'up' }] }],
//     server: { max_body_bytes: 1024 }, breaker: { failure_threshold: 3, open_ms: 3000 },
//     keys: [{ name: 'team-a', key_env: 'TEAM_A_KEY', routes: ['m'] }],
//   }), env: { TEAM_A_KEY: 'sk-a' } });
//   t.after(() => rolter.stop());              // or stop it in a finally
//   own.signal('SIGTERM'); const { code } = await own.waitForExit({ timeoutMs: 10000 });
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSse, withDeadline } from './http.mjs';
import { startSim } from './sim.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const binDir = process.env.ROLTER_BIN_DIR ?? path.join(repoRoot, 'build', 'bin');

// Collects a child's stderr and lets tests wait for a line that matches.
class LogWatch {
  constructor(stream) {
    this.text = '';
    this.waiters = [];
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      this.text += chunk;
      if (process.env.ROLTER_TEST_VERBOSE) process.stderr.write(chunk);
      this.waiters = this.waiters.filter((w) => !w.check());
    });
  }
  // Resolves with the match of `regex` once a line matches, searching only text logged after
  // `from` (an offset into this.text); rejects after timeoutMs.
  waitFor(regex, { from = 0, timeoutMs = 10000 } = {}) {
    return new Promise((resolve, reject) => {
      const waiter = {
        check: () => {
          const m = this.text.slice(from).match(regex);
          if (m) { clearTimeout(waiter.timer); resolve(m); return true; }
          return false;
        },
      };
      if (waiter.check()) return;
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for ${regex} in rolter's log:\n${this.text}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}

// config: rolter.toml text. Its [server].listen is overridden with 127.0.0.1:0. args: more
// `rolter serve` flags, e.g. ['--control-plane', url].
// Rejects (and kills the process) when rolter exits or has not logged its port within
// startTimeoutMs.
export async function startRolter({ config, env = {}, workers = 2, args = [], startTimeoutMs = 10000 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-test-'));
  const configPath = path.join(dir, 'rolter.toml');
  writeFileSync(configPath, config);
  let proc;
  try {
    proc = await spawnRolter(
      ['serve', '--config', configPath, '--listen', '127.0.0.1:0', '--workers', String(workers), ...args],
      { env, startTimeoutMs, what: 'rolter', ready: /rolter listening on (https?):\/\/127\.0\.0\.1:(\d+)/ });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let removed = false;
  return {
    ...proc,
    configPath,
    // Replaces the config file; the watcher (or a SIGHUP) reloads it.
    writeConfig(text) { writeFileSync(configPath, text); },
    // Kills rolter (if still running) and removes its directory. Safe to call twice.
    async stop() {
      await proc.kill();
      if (!removed) rmSync(dir, { recursive: true, force: true });
      removed = true;
    },
  };
}

// Runs `rolter <args>` and resolves once its log matches `ready`, whose groups are the scheme
// and the port: { port, url (https:// with TLS), log, child, exited, running(), signal(name),
// waitForExit({ timeoutMs }), kill() }. Rejects, killing the process, when it exits or has not
// matched within startTimeoutMs. `what` names the process in errors.
export async function spawnRolter(args, { env = {}, ready, startTimeoutMs = 10000, what = 'rolter' }) {
  const child = spawn(path.join(binDir, 'rolter'), args,
    { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = new LogWatch(child.stderr);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = async () => {
    if (running()) child.kill('SIGKILL');
    // SIGKILL cannot be ignored; the deadline only guards against a lost exit event.
    await withDeadline(exited, 5000, `${what} to exit after SIGKILL`);
  };
  const failed = exited.then(({ code, signal }) => {
    throw new Error(`${what} exited with ${code ?? signal} before listening:\n${log.text}`);
  });
  let m;
  try {
    m = await Promise.race([log.waitFor(ready, { timeoutMs: startTimeoutMs }), failed]);
  } catch (err) {
    await kill();
    throw err;
  }
  const port = Number(m[2]);
  return {
    port,
    url: `${m[1]}://127.0.0.1:${port}`,
    log,
    child,
    exited,
    running,
    kill,
    signal(name) { child.kill(name); },
    // Resolves with { code, signal } once it exits; rejects after timeoutMs (it keeps running:
    // kill() still stops it).
    async waitForExit({ timeoutMs = 10000 } = {}) {
      try {
        return await withDeadline(exited, timeoutMs, `${what} to exit`);
      } catch (err) {
        err.message += `; its log:\n${log.text}`;
        throw err;
      }
    },
  };
}

// Builds a rolter.toml from engine URLs: one provider per engine ("engine-0", ... or the engine's
// own `name`), routes, and the optional tables.
//   engines: [{ url, name? }] (rolter-sim's `sim.engines` as they are)
//   routes: [{ name, strategy, targets: [{ engine, model, weight }] }] (`engine`: an index)
//   server: [server] keys, over listen = "127.0.0.1:0" and first_byte_timeout_ms = 10000
//   retry, breaker, health: those tables' keys, e.g. { open_ms: 3000 }
//   providerFields: keys added to every engine's provider, e.g. { health_path: '/health' }
//   keys: [{ name, key_env | key_sha256, routes?, providers? }] as [[keys]]
//   extra: TOML text appended as is
export function configFor({
  engines, routes, extra = '', server = {}, retry, breaker, health, providerFields = {}, keys = [],
}) {
  const serverKeys = { listen: '127.0.0.1:0', first_byte_timeout_ms: 10000, ...server };
  let toml = `[server]\n${tomlKeys(serverKeys)}\n`;
  for (const [name, table] of [['retry', retry], ['breaker', breaker], ['health', health]]) {
    if (table) toml += `[${name}]\n${tomlKeys(table)}\n`;
  }
  engines.forEach((e, i) => {
    toml += `[[providers]]\n${tomlKeys({ name: e.name ?? `engine-${i}`, base_url: e.url, ...providerFields })}\n`;
  });
  // A target may name an engine that is not in `engines` (configs meant to fail validation).
  const providerName = (i) => engines[i]?.name ?? `engine-${i}`;
  for (const r of routes) {
    toml += `[[routes]]\n${tomlKeys({ name: r.name, strategy: r.strategy ?? 'round_robin' })}`;
    for (const t of r.targets) {
      toml += `[[routes.targets]]\n${tomlKeys({ provider: providerName(t.engine), model: t.model, weight: t.weight })}`;
    }
    toml += '\n';
  }
  for (const k of keys) toml += `[[keys]]\n${tomlKeys(k)}\n`;
  return toml + extra;
}

// `key = value` lines for the defined entries of `table` (strings, numbers, booleans, arrays).
function tomlKeys(table) {
  return Object.entries(table).filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} = ${tomlValue(v)}\n`).join('');
}

function tomlValue(v) {
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  // A JSON string is a valid TOML basic string (same escapes).
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`configFor: no TOML form for ${JSON.stringify(v)}`);
}

// Reads a whole SSE response body into its `data:` payloads (kept here for older imports).
export { readSse };

// One test's fleet: a fresh rolter-sim with `engines` engines and a fresh rolter in front of it,
// both stopped when the test ends (registered with t.after, so a failing test stops them too).
// `config` is a function of the sim's engines returning rolter.toml text.
//
//   test('...', async (t) => {
//     const { sim, rolter } = await startFleet(t, { engines: 2, config: (engines) => configFor({ engines, routes }) });
export async function startFleet(t, { engines = 1, simArgs = ['--time-scale', '0'], config, env, workers, args } = {}) {
  const sim = await startSim({ engines, args: simArgs });
  let rolter;
  t.after(async () => {
    await rolter?.stop();
    await stopSim(sim);
  });
  rolter = await startRolter({ config: config(sim.engines), env, workers, args });
  return { sim, rolter };
}

// Stops a rolter-sim: SIGTERM with a deadline, then SIGKILL.
export async function stopSim(sim, { timeoutMs = 5000 } = {}) {
  try {
    await withDeadline(sim.stop(), timeoutMs, 'rolter-sim to exit after SIGTERM');
  } catch (err) {
    sim.process.kill('SIGKILL');
    throw err;
  }
}
