/**
 * The wire types are generated from src/registration/proto by npm-only tools
 * (buf and protoc-gen-es ship in node_modules; no system protoc). This
 * regenerates them into a temp dir and compares with the committed code, so
 * an edited .proto without regenerated TypeScript (or the reverse) fails.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTempDir } from '../testing/index.js';

const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url),
);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test('committed generated code matches a fresh `buf generate` of the .proto files', {
  timeout: 120_000,
}, (t) => {
  const out = createTempDir();
  t.after(() => out.remove());
  const buf = join(repoRoot, 'node_modules', '.bin', 'buf');
  // protoc-gen-es is found on PATH, as `npm run generate` finds it.
  const path = `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
  execFileSync(buf, ['generate', '--output', out.path], {
    cwd: repoRoot,
    env: { ...process.env, PATH: path },
  });

  const committedDir = join(repoRoot, 'src', 'registration', 'gen');
  const freshDir = join(out.path, 'src', 'registration', 'gen');
  const committed = files(committedDir)
    .map((f) => relative(committedDir, f))
    .sort();
  const fresh = files(freshDir)
    .map((f) => relative(freshDir, f))
    .sort();
  assert.deepEqual(committed, fresh, 'the same generated files');
  assert.ok(committed.includes(join('pluginregistration', 'api_pb.ts')));
  for (const file of committed) {
    assert.equal(
      readFileSync(join(committedDir, file), 'utf8'),
      readFileSync(join(freshDir, file), 'utf8'),
      `${file} is stale: run \`npm run generate\``,
    );
  }
});
