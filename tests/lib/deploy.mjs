// Helpers of the deployment tests (tests/deploy/): the build tree the tests' binaries come from,
// commands run to completion, and what the source tree says the version and commit are.
//
//   const r = await run('cmake', ['--install', buildDir, '--prefix', dir, '--strip']);
//   assert.equal(r.code, 0, r.output);
//   await isStripped(`${dir}/bin/rolter`)      // no .debug_* section and no .symtab
//   const deb = await buildPackage(distDir)     // scripts/package on the tests' build tree
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { binDir } from './rolter.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// ROLTER_BIN_DIR is <build>/bin.
export const buildDir = path.dirname(path.resolve(binDir));

// Runs a command to its end. Resolves with { code, stdout, stderr, output } (output: both, for
// assertion messages); never rejects on a non-zero exit.
export function run(command, args, { env = {}, timeoutMs = 120000, cwd } = {}) {
  return new Promise((resolve) => {
    execFile(command, args, { env: { ...process.env, ...env }, timeout: timeoutMs, cwd, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, output: `$ ${command} ${args.join(' ')}\n${stdout}${stderr}` });
      });
  });
}

// project(rolter ... VERSION x.y.z) of the top CMakeLists.txt.
export function projectVersion() {
  const text = readFileSync(path.join(repoRoot, 'CMakeLists.txt'), 'utf8');
  return text.match(/project\(rolter[^)]*VERSION\s+([0-9.]+)/)[1];
}

// `git rev-parse --short HEAD` of the source tree, or null outside a git checkout.
export async function gitShortHead() {
  const r = await run('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD']);
  return r.code === 0 ? r.stdout.trim() : null;
}

// "rolter 0.1.0 (commit 2f75b0a, RelWithDebInfo)" -> { version, commit, buildType }.
export function parseVersionLine(line) {
  const m = line.trim().match(/^rolter (\S+) \(commit (\S+), (\S+)\)$/);
  return m ? { version: m[1], commit: m[2], buildType: m[3] } : null;
}

// True when the ELF file carries neither debug sections nor a symbol table.
export async function isStripped(file) {
  const r = await run('readelf', ['-S', '-W', file]);
  if (r.code !== 0) throw new Error(r.output);
  return !/\s\.(debug_\w+|symtab)\s/.test(r.stdout);
}

// Builds the package (scripts/package) from the tests' build tree, without building that again,
// into distDir. Resolves with the .deb's path; rejects with the script's output on failure.
export async function buildPackage(distDir) {
  const r = await run(path.join(repoRoot, 'scripts/package'), [], {
    env: { ROLTER_BUILD_DIR: buildDir, ROLTER_DIST_DIR: distDir, ROLTER_PACKAGE_NO_BUILD: '1' },
    timeoutMs: 300000,
  });
  if (r.code !== 0) throw new Error(`scripts/package failed:\n${r.output}`);
  return r.stdout.trim().split('\n').pop();
}
