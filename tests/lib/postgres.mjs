// Starts a throwaway PostgreSQL server for a test, as src/store/testing/postgres_server.h does for
// the C++ tests: initdb into a new temporary directory, pg_ctl start listening on a unix socket in
// that directory only (no TCP port, so tests running at once never collide), trust
// authentication for the user "rolter", fsync off.
//
//   const pg = await startPostgres();
//   // pg.url: 'postgresql:///postgres?host=/tmp/rolter-pg-AbC123&user=rolter'
//   await pg.stop();   // stops the server and deletes its directory
//
// initdb refuses to run as root, so as root the server's commands run as the "postgres" user
// (through runuser) and the directory is handed to that user first. The binaries come from
// $ROLTER_POSTGRES_BIN, else the newest /usr/lib/postgresql/*/bin, else PATH; when none is found
// startPostgres() rejects saying so. Every wait has a deadline.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// initdb takes a second or two; far more means the machine is stuck, not slow.
const kCommandDeadlineMs = 90000;
// pg_ctl's own wait for the server to accept connections (or to stop), in seconds.
const kPgCtlWaitSeconds = '60';
const kUser = 'rolter';
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

// The directory holding initdb and pg_ctl, or null.
export function postgresBinDir() {
  const chosen = process.env.ROLTER_POSTGRES_BIN;
  if (chosen) return existsSync(path.join(chosen, 'initdb')) ? chosen : null;
  let versions = [];
  try {
    versions = readdirSync('/usr/lib/postgresql');
  } catch {
    // no Debian-style installation
  }
  const newest = versions
    .filter((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (newest) return `/usr/lib/postgresql/${newest}/bin`;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

// Runs argv (as the postgres user when root) and resolves with its output; rejects with the
// output when it fails or outlives its deadline.
function run(argv) {
  const full = isRoot() ? ['runuser', '-u', 'postgres', '--', ...argv] : argv;
  const shown = full.join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(full[0], full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${shown} did not finish within ${kCommandDeadlineMs} ms\n${output}`));
    }, kCommandDeadlineMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${shown}: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${shown} failed (code ${code}, signal ${signal})\n${output}`));
    });
  });
}

function idOf(flag) {
  return new Promise((resolve, reject) => {
    execFile('id', [flag, 'postgres'], { timeout: 10000 }, (err, stdout) => {
      if (err) {
        reject(new Error('running as root, the PostgreSQL server must run as the "postgres" user, ' +
          `which does not exist: ${err.message}`));
      } else {
        resolve(Number(stdout.trim()));
      }
    });
  });
}

// A new directory for the server. A unix socket's path is limited to 107 bytes, so a long
// temporary directory is passed over for /tmp; as root, /tmp too, which the postgres user can reach.
async function makeDir() {
  const base = isRoot() || os.tmpdir().length > 60 ? '/tmp' : os.tmpdir();
  const dir = await fs.mkdtemp(path.join(base, 'rolter-pg-'));
  if (isRoot()) {
    try {
      await fs.chown(dir, await idOf('-u'), await idOf('-g'));
    } catch (err) {
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  return dir;
}

async function readLog(file) {
  return fs.readFile(file, 'utf8').catch(() => '(no server log)');
}

export async function startPostgres() {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error('the PostgreSQL server binaries (initdb, pg_ctl) were not found in ' +
      '$ROLTER_POSTGRES_BIN, /usr/lib/postgresql/*/bin or PATH: install postgresql-15');
  }
  const dir = await makeDir();
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const pgCtl = (...args) => run([path.join(bin, 'pg_ctl'), '-D', data, ...args]);
  try {
    await run([path.join(bin, 'initdb'), '-D', data, '-U', kUser, '--auth=trust', '--no-sync',
      '--no-locale', '--encoding=UTF8']);
    // Unix socket only, in the server's own directory; durability is not what tests check.
    const options = `-k ${dir} -c listen_addresses='' -c fsync=off -c full_page_writes=off ` +
      '-c synchronous_commit=off';
    await pgCtl('-l', log, '-o', options, '-w', '-t', kPgCtlWaitSeconds, 'start').catch(async (err) => {
      throw new Error(`${err.message}\nserver log:\n${await readLog(log)}`);
    });
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw new Error(`cannot start a PostgreSQL server: ${err.message}`);
  }

  let stopped = null;
  return {
    url: `postgresql:///postgres?host=${dir}&user=${kUser}`,
    dir,
    // Stops the server ("fast", then "immediate" if that did not work) and deletes its
    // directory. Safe to call more than once.
    stop() {
      stopped ??= (async () => {
        await pgCtl('-m', 'fast', '-w', '-t', kPgCtlWaitSeconds, 'stop')
          .catch(() => pgCtl('-m', 'immediate', '-w', '-t', kPgCtlWaitSeconds, 'stop'))
          .finally(() => fs.rm(dir, { recursive: true, force: true }));
      })();
      return stopped;
    },
  };
}
