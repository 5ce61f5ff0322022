// Plays systemd's end of sd_notify(3) for a test: a unix datagram socket (through the
// rolter-notify-listener helper, since Node cannot bind one) whose path goes in NOTIFY_SOCKET,
// and the messages a process sends to it.
//
//   const notify = await startNotifyListener();
//   const rolter = await startRolter({ config, env: { NOTIFY_SOCKET: notify.path } });
//   await notify.waitFor(/^READY=1/);          // resolves with the message, rejects after 10 s
//   notify.messages                            // every message so far, in order
//   await notify.stop();
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binDir } from './rolter.mjs';
import { withDeadline } from './http.mjs';

export async function startNotifyListener() {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-notify-'));
  const socketPath = path.join(dir, 'notify');
  // stdin stays an open pipe: the helper exits when it closes.
  const child = spawn(path.join(binDir, 'rolter-notify-listener'), [socketPath],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const messages = [];
  let waiters = [];
  let listening;
  const bound = new Promise((resolve) => { listening = resolve; });
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line === 'listening') { listening(); continue; }
      messages.push(JSON.parse(line));
      waiters = waiters.filter((w) => !w.check());
    }
  });
  await withDeadline(Promise.race([bound, exited.then(({ code }) => {
    throw new Error(`rolter-notify-listener exited (${code}): ${stderr}`);
  })]), 10000, 'rolter-notify-listener to bind');

  return {
    path: socketPath,
    messages,
    // Resolves with the first message matching `regex` at index `from` or later.
    waitFor(regex, { from = 0, timeoutMs = 10000 } = {}) {
      return new Promise((resolve, reject) => {
        const waiter = {
          check: () => {
            const found = messages.slice(from).find((m) => regex.test(m));
            if (found === undefined) return false;
            clearTimeout(waiter.timer);
            resolve(found);
            return true;
          },
        };
        if (waiter.check()) return;
        waiter.timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`no notify message matched ${regex}; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    async stop() {
      child.stdin.end();
      await withDeadline(exited, 5000, 'rolter-notify-listener to exit').catch(() => child.kill('SIGKILL'));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
