// A real redis-server for a test, on a Unix socket in a temporary directory (no TCP port to race
// for), with persistence off. stop() kills it and removes the directory.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitUntil, withDeadline } from './http.mjs';

export function redisServerBinary() {
  for (const candidate of ['/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('redis-server not found: install the redis-server package (scripts/deps does)');
}

// Runs redis-cli against the server; returns its stdout.
export function redisCli(redis, ...args) {
  const out = spawnSync('redis-cli', ['-s', redis.socket, ...args], { encoding: 'utf8', timeout: 5000 });
  if (out.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${out.stderr}`);
  return out.stdout.trim();
}

// `dir`: the directory (and so the socket path) of a server started before, to restart it there.
// `password`: clients must AUTH with it (requirepass).
export async function startRedis({ startTimeoutMs = 10000, dir: reuse, password } = {}) {
  const dir = reuse ?? mkdtempSync(path.join(tmpdir(), 'rolter-redis-'));
  const socket = path.join(dir, 'redis.sock');
  rmSync(socket, { force: true });  // a killed server's socket file: not a sign of the new one
  const child = spawn(redisServerBinary(), ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700',
    '--save', '', '--appendonly', 'no', '--dir', dir, ...(password ? ['--requirepass', password] : [])],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const running = () => child.exitCode === null && child.signalCode === null;
  try {
    await waitUntil(() => existsSync(socket) || !running(), { timeoutMs: startTimeoutMs, what: 'redis-server to listen' });
    if (!running()) throw new Error(`redis-server exited: ${stderr}`);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    socket,
    dir,
    url: `unix://${socket}`,
    running,
    // keepDir: the socket's directory stays, for a restart in it.
    async stop({ keepDir = false } = {}) {
      if (running()) {
        child.kill('SIGKILL');
        await withDeadline(exited, 5000, 'redis-server to exit');
      }
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
