// `rolter --version` and `rolter version` (SPEC §17): the project's version, the commit it was
// built from and the build type, and the same on /metrics as rolter_build_info = 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { binDir, configFor, startRolter } from '../lib/rolter.mjs';
import { fetchWithin } from '../lib/http.mjs';
import { gitShortHead, parseVersionLine, projectVersion, run } from '../lib/deploy.mjs';

const rolterBin = path.join(binDir, 'rolter');

test('rolter --version and rolter version print the version, the commit and the build type', async () => {
  const head = await gitShortHead();
  for (const args of [['--version'], ['version']]) {
    const r = await run(rolterBin, args, { timeoutMs: 10000 });
    assert.equal(r.code, 0, r.output);
    const info = parseVersionLine(r.stdout);
    assert.ok(info, `one line "rolter V (commit C, TYPE)": ${r.output}`);
    assert.equal(info.version, projectVersion());
    if (head === null) {
      assert.equal(info.commit, 'unknown');
    } else {
      assert.match(info.commit, new RegExp(`^${head}(-dirty)?$`), 'the commit the build was made from');
    }
    assert.match(info.buildType, /^(Debug|Release|RelWithDebInfo|MinSizeRel)$/);
  }
});

test('/metrics carries rolter_build_info{version,commit,build_type} = 1', async (t) => {
  const rolter = await startRolter({
    config: configFor({ engines: [{ url: 'http://127.0.0.1:9' }], routes: [{ name: 'm', targets: [{ engine: 0, model: 'up' }] }] }),
  });
  t.after(() => rolter.stop());
  const info = parseVersionLine((await run(rolterBin, ['--version'])).stdout);
  const res = await fetchWithin(`${rolter.url}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /^# TYPE rolter_build_info gauge$/m);
  const series = text.split('\n').filter((l) => l.startsWith('rolter_build_info{'));
  assert.deepEqual(series, [
    `rolter_build_info{build_type="${info.buildType}",commit="${info.commit}",version="${info.version}"} 1`,
  ]);
});
