/**
 * The structure rules are enforced by `npm run lint` (biome.json): no import
 * cycles, and a folder under src/ is entered from another folder only through
 * its index.ts or types.ts. This test runs the repository's own biome.json
 * over small planted trees, so it fails if either rule is dropped or weakened,
 * and also if the rules start rejecting a tree that follows them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTempDir, type TempDir } from '../src/testing/index.js';

const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../' : '../', import.meta.url),
);

function plantTree(files: Record<string, string>): TempDir {
  const dir = createTempDir();
  const config = JSON.parse(readFileSync(join(repoRoot, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete config.$schema;
  writeFileSync(join(dir.path, 'biome.json'), JSON.stringify(config));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir.path, path)), { recursive: true });
    writeFileSync(join(dir.path, path), text);
  }
  return dir;
}

function lint(dir: TempDir): { status: number | null; output: string } {
  const biome = join(repoRoot, 'node_modules', '.bin', 'biome');
  const result = spawnSync(biome, ['lint', '--max-diagnostics=100', '.'], {
    cwd: dir.path,
    encoding: 'utf8',
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

/** A tree that follows the rules: folders meet through index.ts / types.ts / *-options.ts, at every depth. */
const cleanTree: Record<string, string> = {
  'src/alpha/index.ts': "export { alpha } from './alpha.js';\n",
  'src/alpha/alpha.ts': "import { beta } from '../beta/index.js';\nexport const alpha = beta + 1;\n",
  'src/alpha/types.ts': 'export interface AlphaShape {\n  n: number;\n}\n',
  'src/alpha/alpha-options.ts': 'export const DEFAULT_ALPHA_MS = 1000;\n',
  'src/beta/index.ts': "export { beta } from './beta.js';\n",
  'src/beta/beta.ts': 'export const beta = 1;\n',
  'src/beta/nested/deep.ts':
    "import type { AlphaShape } from '../../alpha/types.js';\nimport { beta } from '../beta.js';\nexport const deep: AlphaShape = { n: beta };\n",
  'test/use.test.ts': "import { alpha } from '../src/alpha/index.js';\nexport const used = alpha;\n",
  'src/beta/beta-defaults.ts':
    "import { DEFAULT_ALPHA_MS } from '../alpha/alpha-options.js';\nexport const betaMs = DEFAULT_ALPHA_MS;\n",
};

test('lint accepts a tree whose folders meet only through index.ts and types.ts', (t) => {
  const dir = plantTree(cleanTree);
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.equal(status, 0, output);
});

test('lint fails on a deep import into another folder, from any depth and from test/', (t) => {
  const dir = plantTree({
    ...cleanTree,
    'src/alpha/alpha.ts': "import { beta } from '../beta/beta.js';\nexport const alpha = beta + 1;\n",
    'src/beta/nested/deep.ts': "import { alpha } from '../../alpha/alpha.js';\nexport const deep = alpha;\n",
    'test/use.test.ts': "import { beta } from '../src/beta/beta.js';\nexport const used = beta;\n",
  });
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.notEqual(status, 0, output);
  const deepImports = output.match(/lint\/style\/noRestrictedImports/g) ?? [];
  assert.equal(deepImports.length, 3, output);
  assert.match(output, /only through its index\.ts, types\.ts or \*-options\.ts/);
});

test('lint fails on an import cycle', (t) => {
  const dir = plantTree({
    ...cleanTree,
    'src/beta/beta.ts': "import { gamma } from './gamma.js';\nexport const beta = gamma + 1;\n",
    'src/beta/gamma.ts':
      "import { beta } from './beta.js';\nexport const gamma = 2;\nexport const viaBeta = () => beta;\n",
  });
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.notEqual(status, 0, output);
  assert.match(output, /lint\/suspicious\/noImportCycles/);
});
