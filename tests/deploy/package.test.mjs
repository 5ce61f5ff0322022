// The Debian package (scripts/package): what dist/rolter_VERSION_ARCH.deb holds and declares,
// read with dpkg-deb. Its install on a fresh Debian 12 is package_install.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildPackage, isStripped, projectVersion, run } from '../lib/deploy.mjs';

let dir;
let deb;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rolter-package-'));
  deb = await buildPackage(path.join(dir, 'dist'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function field(name) {
  const r = await run('dpkg-deb', ['--field', deb, name]);
  assert.equal(r.code, 0, r.output);
  return r.stdout.trim();
}

test('the package is named and versioned after the project and this machine', async () => {
  const arch = (await run('dpkg', ['--print-architecture'])).stdout.trim();
  assert.equal(path.basename(deb), `rolter_${projectVersion()}_${arch}.deb`);
  assert.equal(await field('Package'), 'rolter');
  assert.equal(await field('Version'), projectVersion());
  assert.equal(await field('Architecture'), arch);
  assert.match(await field('Maintainer'), /\S+ <\S+@\S+>/);
});

test('Depends names the packages of the libraries the binaries link, and what the scripts run', async () => {
  const depends = (await field('Depends')).split(',').map((d) => d.trim());
  const names = depends.map((d) => d.split(/[\s(|]/)[0]);
  for (const d of depends) assert.match(d, /^[a-z0-9][a-z0-9+.-]+( \([<>=]+ [^)]+\))?( \| .+)?$/, d);
  // adduser for the system user, procps for the units' /bin/kill, libpq5 and libsystemd0 for what
  // rolter opens when first needed; the rest from dpkg-shlibdeps.
  for (const expected of ['adduser', 'procps', 'libc6', 'libstdc++6', 'libssl3', 'libsystemd0', 'libpq5', 'libzmq5']) {
    assert.ok(names.includes(expected), `Depends has ${expected}: ${depends.join(', ')}`);
  }
});

test('the package holds the binaries, units, docs, example and the configuration as conffiles', async () => {
  const r = await run('dpkg-deb', ['--contents', deb]);
  assert.equal(r.code, 0, r.output);
  const entries = new Map(r.stdout.trim().split('\n').map((line) => {
    const cols = line.split(/\s+/);
    return [cols[5].replace(/^\.\//, '/'), { mode: cols[0], owner: cols[1] }];
  }));
  for (const file of [
    '/usr/bin/rolter', '/usr/bin/rolter-sim', '/usr/bin/rolter-bench',
    '/lib/systemd/system/rolter.service', '/lib/systemd/system/rolter-control-plane.service',
    '/usr/share/rolter/rolter.toml.example', '/usr/share/doc/rolter/README.md',
    '/usr/share/doc/rolter/docs/configuration.md', '/etc/rolter/rolter.toml', '/etc/default/rolter',
    '/etc/logrotate.d/rolter',
  ]) {
    assert.ok(entries.has(file), `${file} in the package`);
    assert.equal(entries.get(file).owner, 'root/root', file);
  }
  assert.equal(entries.get('/usr/bin/rolter').mode, '-rwxr-xr-x');
  assert.equal(entries.get('/etc/default/rolter').mode, '-rw-------', 'the tokens file is root-only');
  assert.ok(![...entries.keys()].some((f) => f.startsWith('/usr/lib/systemd')), 'units under /lib, as Debian 12 keeps them');
  assert.ok(!entries.has('/usr/bin/rolter-notify-listener'), 'no test helper');

  const info = await run('dpkg-deb', ['--info', deb, 'conffiles']);
  assert.equal(info.code, 0, info.output);
  assert.deepEqual(info.stdout.trim().split('\n').sort(),
    ['/etc/default/rolter', '/etc/logrotate.d/rolter', '/etc/rolter/rolter.toml']);
});

test('the packaged binaries are stripped, the units run /usr/bin/rolter, the config is valid', async () => {
  const root = path.join(dir, 'root');
  const x = await run('dpkg-deb', ['--extract', deb, root]);
  assert.equal(x.code, 0, x.output);
  for (const p of readdirSync(path.join(root, 'usr/bin'))) {
    assert.ok(await isStripped(path.join(root, 'usr/bin', p)), `${p} is stripped`);
  }
  for (const unit of ['rolter.service', 'rolter-control-plane.service']) {
    const text = readFileSync(path.join(root, 'lib/systemd/system', unit), 'utf8');
    assert.match(text, /^ExecStart=\/usr\/bin\/rolter /m, unit);
  }
  const config = readFileSync(path.join(root, 'etc/rolter/rolter.toml'), 'utf8');
  assert.match(config, /^\[store\]\nurl = "sqlite:\/var\/lib\/rolter\/rolter\.db"$/m, 'the store in the state directory');
  const check = await run(path.join(root, 'usr/bin/rolter'), ['check', '--config', path.join(root, 'etc/rolter/rolter.toml')]);
  assert.equal(check.code, 0, check.output);
});

test('the maintainer scripts are valid sh', async () => {
  const control = path.join(dir, 'control');
  const e = await run('dpkg-deb', ['--control', deb, control]);
  assert.equal(e.code, 0, e.output);
  for (const script of ['postinst', 'prerm', 'postrm']) {
    const r = await run('sh', ['-n', path.join(control, script)]);
    assert.equal(r.code, 0, `${script}: ${r.output}`);
  }
});
