// The CMake install (SPEC §17): `cmake --install build --prefix P --strip` lays out stripped
// binaries, the example config, the documentation and the systemd units; the installed binary
// runs, names its version and commit, accepts the installed example, and the installed units
// pass `systemd-analyze verify`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  buildDir, gitShortHead, isStripped, parseVersionLine, projectVersion, repoRoot, run,
} from '../lib/deploy.mjs';

const programs = ['rolter', 'rolter-bench', 'rolter-sim'];
const units = ['rolter-control-plane.service', 'rolter.service'];
let prefix;

before(async () => {
  prefix = mkdtempSync(path.join(tmpdir(), 'rolter-install-'));
  const r = await run('cmake', ['--install', buildDir, '--prefix', prefix, '--strip']);
  assert.equal(r.code, 0, r.output);
});
after(() => rmSync(prefix, { recursive: true, force: true }));

test('the install lays out bin/, share/rolter/, share/doc/rolter/ and lib/systemd/system/', () => {
  assert.deepEqual(readdirSync(path.join(prefix, 'bin')).sort(), programs, 'the three programs, no test helper');
  for (const p of programs) accessSync(path.join(prefix, 'bin', p), constants.X_OK);
  assert.equal(readFileSync(path.join(prefix, 'share/rolter/rolter.toml.example'), 'utf8'),
    readFileSync(path.join(repoRoot, 'examples/rolter.toml'), 'utf8'));
  const doc = path.join(prefix, 'share/doc/rolter');
  assert.equal(readFileSync(path.join(doc, 'README.md'), 'utf8'), readFileSync(path.join(repoRoot, 'README.md'), 'utf8'));
  // docs/ keeps its place beside README.md, so the README's links to docs/*.md hold.
  const guides = readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort();
  assert.ok(guides.length > 0);
  assert.deepEqual(readdirSync(path.join(doc, 'docs')).filter((f) => f.endsWith('.md')).sort(), guides);
  assert.deepEqual(readdirSync(path.join(prefix, 'lib/systemd/system')).sort(), units);
});

test('the installed programs are stripped; the build tree keeps its symbols', async () => {
  for (const p of programs) {
    assert.ok(await isStripped(path.join(prefix, 'bin', p)), `${p} is installed stripped`);
  }
  // The check can tell: the RelWithDebInfo binary it was installed from is not.
  assert.ok(!(await isStripped(path.join(buildDir, 'bin', 'rolter'))), 'the build tree\'s rolter has symbols');
});

test('the installed rolter names its version and commit, and accepts the installed example', async () => {
  const bin = path.join(prefix, 'bin', 'rolter');
  const r = await run(bin, ['--version']);
  assert.equal(r.code, 0, r.output);
  const info = parseVersionLine(r.stdout);
  assert.ok(info, r.output);
  assert.equal(info.version, projectVersion());
  const head = await gitShortHead();
  if (head !== null) assert.match(info.commit, new RegExp(`^${head}(-dirty)?$`));
  const check = await run(bin, ['check', '--config', path.join(prefix, 'share/rolter/rolter.toml.example')]);
  assert.equal(check.code, 0, check.output);
  assert.match(check.stdout, /: OK \(/);
});

test('the installed units start the installed binary and pass systemd-analyze verify', async () => {
  for (const unit of units) {
    const text = readFileSync(path.join(prefix, 'lib/systemd/system', unit), 'utf8');
    assert.match(text, new RegExp(`^ExecStart=${prefix}/bin/rolter `, 'm'), `${unit} runs ${prefix}/bin/rolter`);
    assert.match(text, /^Type=notify$/m);
  }
  const r = await run('systemd-analyze', ['verify', ...units.map((u) => path.join(prefix, 'lib/systemd/system', u))]);
  assert.equal(r.code, 0, `systemd-analyze verify (from the systemd package, scripts/deps):\n${r.output}`);
  assert.equal(r.stderr.trim(), '', `no warnings:\n${r.output}`);
});
