/**
 * The wire types are generated from .proto files by npm-only tools (buf and
 * protoc-gen-es ship in node_modules; no system protoc): the root
 * buf.gen.yaml (src/registration/proto) plus one buf.gen.yaml per component
 * with protos of its own (src/handlers/<type>/buf.gen.yaml). This regenerates
 * each into a temp dir and compares with the committed code, so an edited
 * .proto without regenerated TypeScript (or the reverse) fails.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
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

/** The root template and every src/**\/buf.gen.yaml (what `npm run generate` runs). */
function templates(): string[] {
  const found = ['buf.gen.yaml'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(repoRoot, dir)).sort()) {
      const rel = join(dir, name);
      if (name === 'node_modules' || name === 'gen') continue;
      if (statSync(join(repoRoot, rel)).isDirectory()) walk(rel);
      else if (name === 'buf.gen.yaml') found.push(rel);
    }
  };
  walk('src');
  return found;
}

function outputDirs(template: string): string[] {
  const doc = parseYaml(readFileSync(join(repoRoot, template), 'utf8')) as {
    plugins?: Array<{ out?: string }>;
  };
  return (doc.plugins ?? []).map((p) => p.out ?? '').filter((out) => out !== '');
}

const found = templates();

test('every component with protos has a buf template', () => {
  assert.ok(found.includes('buf.gen.yaml'));
  assert.ok(found.includes(join('src', 'handlers', 'csi', 'buf.gen.yaml')), found.join(', '));
  assert.ok(found.includes(join('src', 'handlers', 'dra', 'buf.gen.yaml')), found.join(', '));
});

for (const template of found) {
  test(`committed generated code matches a fresh \`buf generate --template ${template}\``, {
    timeout: 120_000,
  }, (t) => {
    const out = createTempDir();
    t.after(() => out.remove());
    const buf = join(repoRoot, 'node_modules', '.bin', 'buf');
    // protoc-gen-es is found on PATH, as `npm run generate` finds it.
    const path = `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
    execFileSync(buf, ['generate', '--template', template, '--output', out.path], {
      cwd: repoRoot,
      env: { ...process.env, PATH: path },
    });
    const dirs = outputDirs(template);
    assert.ok(dirs.length > 0, `${template} names an output directory`);
    for (const dir of dirs) {
      const committedDir = join(repoRoot, dir);
      const freshDir = join(out.path, dir);
      const committed = files(committedDir)
        .map((f) => relative(committedDir, f))
        .sort();
      const fresh = files(freshDir)
        .map((f) => relative(freshDir, f))
        .sort();
      assert.deepEqual(committed, fresh, `the same generated files in ${dir}`);
      assert.ok(committed.length > 0, `${dir} holds generated code`);
      for (const file of committed) {
        assert.equal(
          readFileSync(join(committedDir, file), 'utf8'),
          readFileSync(join(freshDir, file), 'utf8'),
          `${join(dir, file)} is stale: run \`npm run generate\``,
        );
      }
    }
  });
}
