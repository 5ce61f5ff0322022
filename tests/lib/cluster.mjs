// Starts `rolter control-plane` and `rolter gateway` processes on loopback for tests, and talks to
// the admin API.
//
//   const cp = await startControlPlane({ store: 'sqlite:/tmp/x/rolter.db', config: tomlText,
//     env: { ROLTER_ADMIN_TOKEN: 'adm', ROLTER_NODE_TOKEN: 'node' } });
//   const gw = await startGateway({ controlPlane: cp.url, nodeId: 'gw-1', stateDir, env });
//   const api = adminClient(cp.url, 'adm');
//   const r = await api.post('/routes', { name: 'm', targets: [...] });  // { status, body }
//   await gw.stop(); await cp.stop();
//
// Every process binds port 0 and is found by the port it logs; every wait has a deadline.
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnRolter } from './rolter.mjs';
import { fetchWithin } from './http.mjs';

// `listen` defaults to 127.0.0.1:0.
export async function startControlPlane({ config, store, env = {}, args = [], listen = '127.0.0.1:0' } = {}) {
  const dir = tempDir('rolter-cp-');  // removed by stop(), or at exit after stop({ keepDir })
  const cmd = ['control-plane', '--listen', listen, '--workers', '2'];
  if (config !== undefined) {
    const configPath = path.join(dir, 'rolter.toml');
    writeFileSync(configPath, config);
    cmd.push('--config', configPath);
  }
  if (store !== undefined) cmd.push('--store', store);
  const proc = await spawnRolter([...cmd, ...args], {
    env, what: 'rolter control-plane',
    ready: /rolter control plane listening on (https?):\/\/127\.0\.0\.1:(\d+)/,
  });
  proc.dir = dir;
  proc.stop = async ({ keepDir = false } = {}) => {
    await proc.kill();
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  };
  return proc;
}

// A data-plane node following `controlPlane`. `listen` defaults to 127.0.0.1:0.
export async function startGateway({
  controlPlane, nodeId, stateDir, env = {}, listen = '127.0.0.1:0', args = [], startTimeoutMs,
}) {
  const cmd = ['gateway', '--control-plane', controlPlane, '--listen', listen, '--workers', '2'];
  if (nodeId) cmd.push('--node-id', nodeId);
  if (stateDir) cmd.push('--state-dir', stateDir);
  const proc = await spawnRolter([...cmd, ...args], {
    env, what: `rolter gateway ${nodeId ?? ''}`, startTimeoutMs,
    ready: /rolter gateway listening on (https?):\/\/127\.0\.0\.1:(\d+)/,
  });
  proc.stop = proc.kill;
  return proc;
}

// The admin API with one bearer token. Each call resolves with { status, body } (body parsed
// when it is JSON).
export function adminClient(baseUrl, token) {
  const call = async (method, route, body) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetchWithin(`${baseUrl}/api/v1${route}`, {
      method, headers, body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
    });
    const text = await res.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, body: parsed, text, headers: res.headers };
  };
  return {
    get: (route) => call('GET', route),
    post: (route, body) => call('POST', route, body),
    put: (route, body) => call('PUT', route, body),
    del: (route) => call('DELETE', route),
  };
}

// A fresh folder under the system's temporary directory, removed when the test file's process
// exits (ROLTER_KEEP_TEST_DIRS=1 keeps it for a look after a failure).
const madeDirs = [];
process.on('exit', () => {
  if (process.env.ROLTER_KEEP_TEST_DIRS === '1') return;
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
});
export function tempDir(prefix = 'rolter-state-') {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}
