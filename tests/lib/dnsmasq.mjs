// A real DNS server for a test: Debian's dnsmasq on a loopback port, answering for *.rolter.test
// from a hosts file that the test rewrites (setHosts() re-reads it with SIGHUP), plus fixed SRV
// records. Names outside rolter.test are not forwarded anywhere.
//
//   const dns = await startDnsmasq({ hosts: '127.0.0.2 engines.rolter.test\n' });
//   dns.resolver                       // "127.0.0.1:PORT", for discover_resolver
//   await dns.setHosts('127.0.0.2 engines.rolter.test\n127.0.0.3 engines.rolter.test\n');
//   await dns.stop();
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { waitUntil } from './http.mjs';

export function dnsmasqBinary() {
  for (const candidate of ['/usr/sbin/dnsmasq', '/sbin/dnsmasq']) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('dnsmasq not found: install the dnsmasq-base package (scripts/deps does)');
}

// A UDP port on 127.0.0.1 that was free a moment ago.
async function freeUdpPort() {
  const socket = dgram.createSocket('udp4');
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', resolve);
  });
  const { port } = socket.address();
  await new Promise((resolve) => socket.close(resolve));
  return port;
}

// `srv`: ['_http._tcp.srv.rolter.test,engine-a.rolter.test,8001', ...] (dnsmasq's --srv-host).
export async function startDnsmasq({ hosts = '', srv = [], startTimeoutMs = 10000 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-dns-'));
  chmodSync(dir, 0o755);
  const hostsFile = path.join(dir, 'hosts');
  writeFileSync(hostsFile, hosts, { mode: 0o644 });
  const { username } = userInfo();
  // dnsmasq binds the port for UDP and TCP; the probe sees only UDP. A TCP listener of another
  // process on the same number makes dnsmasq exit at once: it is started again on another port.
  let port;
  let child;
  let log;
  let exited;
  for (let attempt = 1; ; attempt += 1) {
    port = await freeUdpPort();
    child = spawn(dnsmasqBinary(), [
      '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts',
      '--listen-address=127.0.0.1', '--bind-interfaces', `--port=${port}`, '--pid-file=',
      '--local=/rolter.test/', '--log-facility=-', `--user=${username}`,
      `--addn-hosts=${hostsFile}`, ...srv.map((record) => `--srv-host=${record}`),
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    const started = child;
    log = '';
    started.stderr.setEncoding('utf8');
    started.stderr.on('data', (chunk) => { log += chunk; });
    exited = new Promise((resolve) => started.on('exit', (code, signal) => resolve({ code, signal })));
    const alive = () => started.exitCode === null && started.signalCode === null;
    const read = () => log.includes(`read ${hostsFile}`);
    try {
      await waitUntil(() => read() || !alive(), { timeoutMs: startTimeoutMs, what: 'dnsmasq to start' });
    } catch (err) {
      started.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    if (alive()) break;
    await exited;
    if (attempt < 5 && /Address already in use/.test(log)) continue;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`dnsmasq exited: ${log}`);
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  // dnsmasq logs "read <file> - N names" (or "addresses") each time it reads the hosts file.
  const reads = () => log.split(`read ${hostsFile}`).length - 1;
  return {
    port,
    resolver: `127.0.0.1:${port}`,
    log: () => log,
    running,
    // Replaces the hosts file and resolves once dnsmasq has read it again.
    async setHosts(text) {
      const before = reads();
      writeFileSync(hostsFile, text);
      child.kill('SIGHUP');
      await waitUntil(() => reads() > before, { timeoutMs: 5000, what: 'dnsmasq to re-read its hosts' });
    },
    async stop() {
      if (running()) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
