// The container image (Containerfile, scripts/image): built with scripts/image, then its root file
// system is mounted and rolter runs from a chroot of it as the image's user; the runtime holds no
// compiler and no package cache, runs as a non-root user, and starts rolter.
//
// Building the image takes minutes, so that test runs only with ROLTER_TEST_IMAGE=1
// (`scripts/test --all` sets it); ROLTER_TEST_IMAGE_REF=NAME:TAG checks an image already built
// instead of running scripts/image. It needs buildah; as root it mounts directly, otherwise
// inside `buildah unshare`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const imageUser = '10001';

// The package names of a bash array `packages=( ... )` (comments dropped).
function bashArray(text, name) {
  const body = text.match(new RegExp(`^${name}=\\(([\\s\\S]*?)^\\)`, 'm'))?.[1];
  assert.ok(body, `${name}=( ... ) not found`);
  return body.split('\n').map((l) => l.replace(/#.*/, '')).join(' ').split(/\s+/).filter(Boolean);
}

test("the image's build stage installs what scripts/deps installs to build (the toolchain and every -dev package)", () => {
  const deps = bashArray(readFileSync(path.join(repoRoot, 'scripts', 'deps'), 'utf8'), 'packages');
  const toolchain = ['g++', 'cmake', 'ninja-build', 'ccache', 'pkg-config'];
  // dpkg-dev is scripts/package's tool (dpkg-shlibdeps), not a library the compile needs.
  const notLibraries = ['dpkg-dev'];
  const needed = deps.filter((p) => (p.endsWith('-dev') && !notLibraries.includes(p)) || toolchain.includes(p));
  assert.ok(needed.length > 10, `scripts/deps lists the build packages: ${needed}`);
  const containerfile = readFileSync(path.join(repoRoot, 'Containerfile'), 'utf8');
  const buildStage = containerfile.split(/^FROM /m).find((s) => / AS build$/m.test(s.split('\n')[0]));
  assert.ok(buildStage, 'the Containerfile has a build stage');
  const install = buildStage.match(/apt-get install[^\n]*\\\n((?:[^\n]*\\\n)*[^\n]*)/)?.[0] ?? '';
  const installed = install.replace(/\\\n/g, ' ').split(/\s+/);
  const missing = needed.filter((p) => !installed.includes(p));
  assert.deepEqual(missing, [], 'build packages of scripts/deps missing from the Containerfile');
  assert.doesNotMatch(install, /chromium|firefox|postgresql-|nginx|redis-server/, 'the build stage installs no test servers or browsers');
});

// Runs `command args` and resolves with { code, stdout, stderr }, echoing stderr when asked.
function run(command, args, { echo = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (echo) process.stderr.write(d);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Mounts the image, runs each check in a chroot of it (or reads it), writes each one's output to
// $2/NAME.out and status to $2/NAME.rc, and unmounts and removes its container on every path.
// The image's own command (serve --config /etc/rolter/rolter.toml) runs too, on a loopback port
// of its choosing, as the image user: /readyz must answer 200 (its output in serve_readyz.out).
const inspectScript = String.raw`
set -u
image=$1 out=$2 user=$3
serve=
container=$(buildah from --pull=never --quiet "$image") || exit 1
trap 'if [ -n "$serve" ]; then kill "$serve" 2>/dev/null; wait "$serve"; fi; buildah umount "$container" >/dev/null 2>&1; buildah rm "$container" >/dev/null 2>&1' EXIT
root=$(buildah mount "$container") || exit 1
check() { name=$1; shift; "$@" >"$out/$name.out" 2>&1; echo $? >"$out/$name.rc"; }
readyz() {
  local port=
  for _ in $(seq 100); do
    # The digits end where the line goes on: a line still being written gives no port.
    port=$(sed -n 's#.*rolter listening on http://127\.0\.0\.1:\([0-9][0-9]*\) .*#\1#p' "$out/serve.log")
    [ -n "$port" ] && break
    kill -0 "$serve" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$out/serve.log"; return 1; }
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
  head -n 1 <&3
}
chroot --userspec="$user:$user" "$root" /usr/local/bin/rolter serve --config /etc/rolter/rolter.toml   --listen 127.0.0.1:0 >"$out/serve.log" 2>&1 &
serve=$!
check serve_readyz readyz
kill "$serve"; wait "$serve"; serve=
check store test -s "$root/var/lib/rolter/rolter.db"
check version chroot --userspec="$user:$user" "$root" /usr/local/bin/rolter --version
check check chroot --userspec="$user:$user" "$root" /usr/local/bin/rolter check --config /etc/rolter/rolter.toml
check ldd chroot "$root" ldd /usr/local/bin/rolter /usr/local/bin/rolter-sim /usr/local/bin/rolter-bench
check opened chroot "$root" sh -c 'for l in libpq.so.5 libsystemd.so.0; do ls /usr/lib/*/$l || exit 1; ldd /usr/lib/*/$l; done'
check compilers sh -c 'for c in gcc g++ cc c++ cpp ld as make cmake ninja clang; do for d in usr/bin bin usr/local/bin; do if [ -e "$1/$d/$c" ] || [ -L "$1/$d/$c" ]; then echo "$d/$c"; fi; done; done; ls -d "$1"/usr/lib/gcc/*/*/cc1* 2>/dev/null; true' sh "$root"
check apt_lists sh -c 'find "$1/var/lib/apt/lists" -mindepth 1 -not -name lock -not -name partial -not -path "*/partial/*" -print' sh "$root"
check apt_debs sh -c 'find "$1/var/cache/apt" -name "*.deb" -print' sh "$root"
check sleep test -x "$root/bin/sleep"
check ca_bundle test -s "$root/etc/ssl/certs/ca-certificates.crt"
check passwd grep "^rolter:x:$user:$user:" "$root/etc/passwd"
check group grep "^rolter:x:$user:" "$root/etc/group"
check state_dir stat -c '%u:%g' "$root/var/lib/rolter"
check listen grep '^listen = ' "$root/etc/rolter/rolter.toml"
`;

test('the image: rolter runs from it as a non-root user; no compiler, no package cache', {
  skip: process.env.ROLTER_TEST_IMAGE === '1' ? false
    : 'building the container image takes minutes: set ROLTER_TEST_IMAGE=1 (scripts/test --all does)',
  timeout: 60 * 60 * 1000,
}, async (t) => {
  let image = process.env.ROLTER_TEST_IMAGE_REF;
  if (!image) {
    const built = await run(path.join(repoRoot, 'scripts', 'image'), [], { echo: !!process.env.ROLTER_TEST_VERBOSE });
    assert.equal(built.code, 0, `scripts/image failed:\n${built.stderr.slice(-4000)}\n${built.stdout.slice(-4000)}`);
    const summary = (built.stdout + built.stderr).match(/^scripts\/image: (\S+) \(and :latest\), (.+), built in (\d+) s$/m);
    assert.ok(summary, `scripts/image names the image it built:\n${built.stdout.slice(-2000)}`);
    image = summary[1];
    t.diagnostic(`scripts/image built ${image} in ${summary[3]} s`);
  }
  const info = JSON.parse(execFileSync('buildah', ['inspect', '--type', 'image', image], { encoding: 'utf8' }));
  const config = info.OCIv1.config;
  const size = execFileSync('buildah', ['images', '--format', '{{.Size}}', image], { encoding: 'utf8' }).split('\n')[0];
  t.diagnostic(`image ${image}: ${size}`);
  console.log(`# image ${image}: ${size}`);
  const version = config.Labels?.['org.opencontainers.image.version'];
  assert.ok(version, 'the image is labelled with its version');
  assert.ok(image.endsWith(`:${version}`) || !process.env.ROLTER_TEST_IMAGE_REF, `${image} is tagged with its version ${version}`);
  assert.equal(config.User, `${imageUser}:${imageUser}`, 'runs as the rolter user, not root');
  assert.deepEqual(config.Entrypoint, ['rolter']);
  assert.deepEqual(config.Cmd, ['serve', '--config', '/etc/rolter/rolter.toml']);
  assert.ok('4000/tcp' in (config.ExposedPorts ?? {}), 'EXPOSE 4000');
  const labels = config.Labels ?? {};
  assert.match(labels['org.opencontainers.image.revision'] ?? '', /^[0-9a-f]{40}(-dirty)?$|^unknown$/);
  assert.ok(labels['org.opencontainers.image.title']);

  const out = mkdtempSync(path.join(tmpdir(), 'rolter-image-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const asRoot = process.getuid() === 0;
  const mounted = asRoot
    ? await run('bash', ['-c', inspectScript, 'bash', image, out, imageUser])
    : await run('buildah', ['unshare', 'bash', '-c', inspectScript, 'bash', image, out, imageUser]);
  assert.equal(mounted.code, 0, `mounting ${image}: ${mounted.stderr}`);
  const result = (name) => ({
    code: Number(readFileSync(path.join(out, `${name}.rc`), 'utf8')),
    output: readFileSync(path.join(out, `${name}.out`), 'utf8'),
  });

  const checkRun = result('check');
  assert.equal(checkRun.code, 0, `rolter check --config /etc/rolter/rolter.toml in the image:\n${checkRun.output}`);
  assert.doesNotMatch(result('ldd').output, /not found/, 'every shared library is in the image');
  const opened = result('opened');
  assert.equal(opened.code, 0, `the libraries rolter opens when first needed:\n${opened.output}`);
  assert.doesNotMatch(opened.output, /not found/, 'and what they link');
  assert.equal(result('compilers').output.trim(), '', 'no compiler or build tool in the runtime image');
  assert.equal(result('apt_lists').output.trim(), '', 'no package lists in /var/lib/apt/lists');
  assert.equal(result('apt_debs').output.trim(), '', 'no downloaded packages in /var/cache/apt');
  assert.equal(result('sleep').code, 0, '/bin/sleep, which the Kubernetes preStop hooks run');
  assert.equal(result('ca_bundle').code, 0, 'the CA bundle, for upstreams over TLS');
  assert.equal(result('passwd').code, 0, `a rolter user with uid and gid ${imageUser}:\n${result('passwd').output}`);
  assert.equal(result('group').code, 0, `a rolter group with gid ${imageUser}`);
  assert.equal(result('state_dir').output.trim(), `${imageUser}:${imageUser}`, '/var/lib/rolter belongs to the rolter user');
  assert.match(result('listen').output, /^listen = "0\.0\.0\.0:4000"/, 'the config listens where EXPOSE says');
  assert.match(result('serve_readyz').output, /^HTTP\/1\.1 200 /, `rolter serve with the image's config, /readyz:\n${result('serve_readyz').output}`);
  assert.equal(result('store').code, 0, 'the embedded store is made in /var/lib/rolter');
  assert.equal(readdirSync(out).filter((f) => f.endsWith('.rc')).length, 14, 'every check ran');
  // Last, as it needs `rolter --version` (SPEC §17), which comes with the version stamp of the
  // install and packaging work; a rolter without it answers with a usage error.
  const versionRun = result('version');
  assert.equal(versionRun.code, 0, `rolter --version in the image:\n${versionRun.output}`);
  assert.match(versionRun.output, new RegExp(version.replace(/\./g, '\\.')));
  const revision = labels['org.opencontainers.image.revision'];
  if (revision !== 'unknown') assert.match(versionRun.output, new RegExp(revision.slice(0, 7)), 'the commit of the label');
});
