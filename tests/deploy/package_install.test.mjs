// Acceptance of the Debian package: on a fresh Debian 12 root (scripts/debian-rootfs, a
// debootstrap minbase), `apt-get install ./rolter_*.deb` resolves every dependency from the
// archive, the maintainer scripts run without systemd, the installed rolter runs and accepts
// its packaged config, both units pass systemd-analyze verify there, and remove and purge work.
//
// It downloads from the Debian archive and needs root (chroot, mount): it runs only with
// ROLTER_TEST_PACKAGE=1 (scripts/test --all sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildPackage, projectVersion, repoRoot, run } from '../lib/deploy.mjs';

const enabled = process.env.ROLTER_TEST_PACKAGE === '1';
const skip = !enabled
  ? 'slow (downloads from the Debian archive): set ROLTER_TEST_PACKAGE=1 to run it'
  : process.getuid() !== 0 ? 'needs root (chroot and mount)' : false;

// A Debian root unpacked from the cached tarball, with /dev and /proc mounted and the host's
// resolver. cleanup() unmounts and removes it whatever happened before.
async function debianRoot(dir) {
  const tarball = await run(path.join(repoRoot, 'scripts/debian-rootfs'), [], { timeoutMs: 900000 });
  assert.equal(tarball.code, 0, tarball.output);
  const root = path.join(dir, 'root');
  const mounted = [];
  const cleanup = async () => {
    for (const m of mounted.reverse()) await run('umount', ['--lazy', m]);
    mounted.length = 0;
  };
  try {
    assert.equal((await run('mkdir', ['-p', root])).code, 0);
    const x = await run('tar', ['-C', root, '--numeric-owner', '-xzf', tarball.stdout.trim()]);
    assert.equal(x.code, 0, x.output);
    for (const [args, at] of [[['--bind', '/dev'], 'dev'], [['-t', 'proc', 'proc'], 'proc']]) {
      const target = path.join(root, at);
      const m = await run('mount', [...args, target]);
      assert.equal(m.code, 0, m.output);
      mounted.push(target);
    }
    copyFileSync('/etc/resolv.conf', path.join(root, 'etc/resolv.conf'));
  } catch (err) {
    await cleanup();
    throw err;
  }
  const inRoot = (args, timeoutMs = 120000) => run('chroot', [root, ...args], {
    env: { DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C', PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, timeoutMs,
  });
  return { root, inRoot, cleanup };
}

test('on a fresh Debian 12, apt installs the .deb with its dependencies; rolter runs; the units verify', { skip, timeout: 30 * 60000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rolter-debian-'));
  let system;
  try {
    const deb = await buildPackage(path.join(dir, 'dist'));
    system = await debianRoot(dir);
    const { root, inRoot } = system;
    copyFileSync(deb, path.join(root, 'tmp/rolter.deb'));

    const update = await inRoot(['apt-get', 'update', '-q'], 600000);
    assert.equal(update.code, 0, update.output);
    const install = await inRoot(['apt-get', 'install', '-y', '-q', '--no-install-recommends', '/tmp/rolter.deb'], 900000);
    assert.equal(install.code, 0, install.output);
    assert.match(install.stdout, /Setting up rolter /);

    const version = await inRoot(['rolter', '--version']);
    assert.equal(version.code, 0, version.output);
    assert.match(version.stdout, new RegExp(`^rolter ${projectVersion().replaceAll('.', '\\.')} \\(commit \\S+, \\S+\\)$`, 'm'));
    const check = await inRoot(['rolter', 'check', '--config', '/etc/rolter/rolter.toml']);
    assert.equal(check.code, 0, check.output);

    // postinst: the system user, and the configuration readable by its group alone.
    const user = await inRoot(['getent', 'passwd', 'rolter']);
    assert.equal(user.code, 0, `the rolter user exists: ${user.output}`);
    assert.match(user.stdout, /^rolter:x:\d+:\d+:[^:]*:\/var\/lib\/rolter:/);
    const modes = await inRoot(['stat', '-c', '%n %U:%G %a', '/etc/rolter/rolter.toml', '/etc/default/rolter']);
    assert.equal(modes.stdout, '/etc/rolter/rolter.toml root:rolter 640\n/etc/default/rolter root:root 600\n');

    // systemd itself is no dependency (a container may run rolter without it); a host has it.
    const systemd = await inRoot(['apt-get', 'install', '-y', '-q', '--no-install-recommends', 'systemd'], 900000);
    assert.equal(systemd.code, 0, systemd.output);
    const verify = await inRoot(['systemd-analyze', 'verify', 'rolter.service', 'rolter-control-plane.service']);
    assert.equal(verify.code, 0, verify.output);
    assert.equal(verify.stderr.trim(), '', `no warnings:\n${verify.output}`);

    const remove = await inRoot(['dpkg', '--remove', 'rolter']);
    assert.equal(remove.code, 0, remove.output);
    assert.equal((await inRoot(['test', '-e', '/usr/bin/rolter'])).code, 1, 'the binary is gone');
    assert.equal((await inRoot(['test', '-e', '/etc/rolter/rolter.toml'])).code, 0, 'remove keeps the conffiles');
    const purge = await inRoot(['dpkg', '--purge', 'rolter']);
    assert.equal(purge.code, 0, purge.output);
    assert.equal((await inRoot(['test', '-e', '/etc/rolter/rolter.toml'])).code, 1, 'purge removes them');
    assert.equal((await inRoot(['dpkg-statoverride', '--list', '/etc/rolter/rolter.toml'])).code, 1, 'and the override');
  } finally {
    if (system) await system.cleanup();
    // Never into a mount left behind (the host's /dev): removal stays on this file system, and
    // is skipped while anything is still mounted below the folder.
    const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '');
    if (!mounts.some((m) => m.startsWith(`${dir}/`))) await run('rm', ['-rf', '--one-file-system', dir]);
  }
});
