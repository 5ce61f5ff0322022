// The configuration examples in the operator guides, and the demo's config, are real configs: every ```toml block in
// them is written to a file and must pass `rolter check` (exit 0, no error line), so a renamed
// key or a changed rule cannot leave a guide teaching a config the gateway refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { binDir } from '../lib/rolter.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const guides = ['docs/configuration.md', 'docs/policy-mode.md', 'docs/adaptive-routing.md'];

// The ```toml blocks of a Markdown file, with the line each starts on.
export function tomlBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; ++i) {
    if (lines[i].trim() !== '```toml') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') ++end;
    blocks.push({ line: start + 1, text: lines.slice(start, end).join('\n') + '\n' });
    i = end;
  }
  return blocks;
}

function check(file) {
  return new Promise((resolve) => {
    execFile(path.join(binDir, 'rolter'), ['check', '--config', file], { timeout: 10000 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, output: stdout + stderr }));
  });
}

for (const guide of guides) {
  test(`every config example in ${guide} passes rolter check`, async () => {
    const blocks = tomlBlocks(readFileSync(path.join(repoRoot, guide), 'utf8'));
    assert.ok(blocks.length >= 1, `${guide} has no toml example`);
    const dir = mkdtempSync(path.join(tmpdir(), 'rolter-docs-'));
    try {
      for (const [n, block] of blocks.entries()) {
        const file = path.join(dir, `example-${n}.toml`);
        writeFileSync(file, block.text);
        const { code, output } = await check(file);
        assert.equal(code, 0, `${guide}:${block.line}: rolter check failed:\n${output}`);
        assert.doesNotMatch(output, /error/i, `${guide}:${block.line}:\n${output}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('examples/rolter.toml, which scripts/demo serves, passes rolter check', async () => {
  const { code, output } = await check(path.join(repoRoot, 'examples', 'rolter.toml'));
  assert.equal(code, 0, output);
  assert.doesNotMatch(output, /error/i, output);
  assert.match(output, /OK \(/);
});

test('a broken example is caught: rolter check refuses a policy route with weights on some targets',
  async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rolter-docs-'));
    try {
      const file = path.join(dir, 'bad.toml');
      writeFileSync(file, [
        '[[providers]]', 'name = "a"', 'base_url = "http://127.0.0.1:8001"',
        '[[providers]]', 'name = "b"', 'base_url = "http://127.0.0.1:8002"',
        '[[routes]]', 'name = "m"', 'strategy = "policy"',
        '[[routes.targets]]', 'provider = "a"', 'model = "x"', 'weight = 2',
        '[[routes.targets]]', 'provider = "b"', 'model = "x"', '',
      ].join('\n'));
      const { code, output } = await check(file);
      assert.equal(code, 1, output);
      assert.match(output, /must set weight on every target/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
