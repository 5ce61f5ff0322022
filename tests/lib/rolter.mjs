// Starts a real `rolter serve` process on loopback for tests, with a config written to a fresh
// temporary directory, and waits until it listens (it binds port 0 and logs the port).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

// config: rolter.toml text. Its [server].listen is overridden with 127.0.0.1:0.
export async function startRolter({ config, env = {}, workers = 2 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-test-'));
  const configPath = path.join(dir, 'rolter.toml');
  writeFileSync(configPath, config);
  const child = spawn(path.join(binDir, 'rolter'),
    ['serve', '--config', configPath, '--listen', '127.0.0.1:0', '--workers', String(workers)],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = new LogWatch(child.stderr);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const started = log.waitFor(/rolter listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const failed = exited.then(({ code }) => {
    throw new Error(`rolter exited with ${code} before listening:\n${log.text}`);
  });
  const m = await Promise.race([started, failed]);
  const port = Number(m[1]);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    configPath,
    log,
    child,
    exited,
    // Replaces the config file; the watcher (or a SIGHUP) reloads it.
    writeConfig(text) { writeFileSync(configPath, text); },
    signal(name) { child.kill(name); },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Builds a rolter.toml from engine URLs: one provider per engine ("engine-0", ...), and routes.
// routes: [{ name, strategy, targets: [{ engine, model, weight }] }]
export function configFor({ engines, routes, extra = '' }) {
  let toml = '[server]\nlisten = "127.0.0.1:0"\nfirst_byte_timeout_ms = 10000\n\n';
  engines.forEach((e, i) => {
    toml += `[[providers]]\nname = "engine-${i}"\nbase_url = "${e.url}"\n\n`;
  });
  for (const r of routes) {
    toml += `[[routes]]\nname = "${r.name}"\nstrategy = "${r.strategy ?? 'round_robin'}"\n`;
    for (const t of r.targets) {
      toml += `[[routes.targets]]\nprovider = "engine-${t.engine}"\nmodel = "${t.model}"\n`;
      if (t.weight !== undefined) toml += `weight = ${t.weight}\n`;
    }
    toml += '\n';
  }
  return toml + extra;
}

// Reads a whole SSE response body into its `data:` payloads.
export async function readSse(response) {
  const text = await response.text();
  return text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
}
