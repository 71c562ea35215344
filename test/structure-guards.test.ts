/**
 * The structure rules are enforced by `npm run lint` (biome.json): no import
 * cycles, and a folder under src/ is entered from another folder only through
 * its index.ts or types.ts. This test runs the repository's own biome.json
 * over small planted trees, so it fails if either rule is dropped or weakened,
 * and also if the rules start rejecting a tree that follows them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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

test('lint fails on an import cycle made only of type imports', (t) => {
  // biome's noImportCycles skips `import type` by default (ignoreTypes); biome.json turns that off.
  const dir = plantTree({
    ...cleanTree,
    'src/beta/beta.ts':
      "import type { Gamma } from './gamma.js';\nexport const beta = 1;\nexport type Beta = { g?: Gamma };\n",
    'src/beta/gamma.ts': "import type { Beta } from './beta.js';\nexport type Gamma = { b?: Beta };\n",
  });
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.notEqual(status, 0, output);
  assert.equal((output.match(/lint\/suspicious\/noImportCycles/g) ?? []).length, 2, output);
});

/** Two handler types that use only their own files, src/handlers' shared files and other folders' entries. */
const handlerTree: Record<string, string> = {
  ...cleanTree,
  'src/handlers/types.ts': 'export interface Handler {\n  type: string;\n}\n',
  'src/handlers/shared-helper.ts': 'export const quote = (s: string) => s.trim();\n',
  'src/handlers/csi/index.ts': "export { csi } from './csi.js';\n",
  'src/handlers/csi/csi.ts':
    "import { beta } from '../../beta/index.js';\nimport { quote } from '../shared-helper.js';\nimport type { Handler } from '../types.js';\nexport const csi: Handler = { type: quote(String(beta)) };\n",
  'src/handlers/dra/index.ts': "export { dra } from './dra.js';\n",
  'src/handlers/dra/dra.ts':
    "import type { Handler } from '../types.js';\nexport const dra: Handler = { type: 'dra' };\n",
  'src/handlers/dra/sub/deep.ts': "import { dra } from '../dra.js';\nexport const deep = dra;\n",
};

test('lint accepts handler types that share only src/handlers own files', (t) => {
  const dir = plantTree(handlerTree);
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.equal(status, 0, output);
});

test('lint fails when a handler type imports a sibling handler type, through its index.ts or deeper', (t) => {
  const dir = plantTree({
    ...handlerTree,
    'src/handlers/csi/csi.ts':
      "import { dra } from '../dra/index.js';\nimport type { Handler } from '../types.js';\nexport const csi: Handler = dra;\n",
    'src/handlers/dra/sub/deep.ts': "import { csi } from '../../csi/csi.js';\nexport const deep = csi;\n",
  });
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.notEqual(status, 0, output);
  assert.equal((output.match(/lint\/style\/noRestrictedImports/g) ?? []).length, 2, output);
  assert.match(output, /handler types are fenced from each other/);
});

test("lint keeps berth/testing's shipped helpers off the unshipped harness; tests may use it", (t) => {
  const harness = {
    'src/testing/index.ts': "export { waitFor } from './wait-for.js';\n",
    'src/testing/wait-for.ts': 'export const waitFor = () => 1;\n',
    'src/testing/harness/index.ts': "export { startServer } from './server.js';\n",
    'src/testing/harness/server.ts':
      "import { waitFor } from '../wait-for.js';\nexport const startServer = () => waitFor();\n",
    'test/uses-harness.test.ts':
      "import { startServer } from '../src/testing/harness/index.js';\nexport const used = startServer;\n",
    'src/alpha/alpha.test.ts':
      "import { startServer } from '../testing/harness/index.js';\nexport const used = startServer;\n",
  };
  const clean = plantTree({ ...cleanTree, ...harness });
  t.after(() => clean.remove());
  const accepted = lint(clean);
  assert.equal(accepted.status, 0, accepted.output);

  const dir = plantTree({
    ...cleanTree,
    ...harness,
    'src/testing/wait-for.ts':
      "import { startServer } from './harness/index.js';\nexport const waitFor = () => 1;\nexport const s = startServer;\n",
  });
  t.after(() => dir.remove());
  const { status, output } = lint(dir);
  assert.notEqual(status, 0, output);
  assert.match(output, /the harness \(src\/testing\/harness\/\) is not/);
});

test('lint fails when the public API differs from the committed API report, and says how to accept it', () => {
  const reportDir = createTempDir();
  try {
    const committed = readFileSync(join(repoRoot, 'api', 'berth.api.md'), 'utf8');
    const altered = join(reportDir.path, 'berth.api.md');
    writeFileSync(
      altered,
      committed.replace(/^function createPluginNode: .*$/m, 'function createPluginNode: () => void'),
    );
    const check = (report: string) =>
      spawnSync(process.execPath, [join(repoRoot, 'scripts', 'api-report.mjs'), '--check'], {
        cwd: repoRoot,
        encoding: 'utf8',
        env: { ...process.env, BERTH_API_REPORT: report },
      });
    const same = check(join(repoRoot, 'api', 'berth.api.md'));
    assert.equal(same.status, 0, same.stderr);
    const differs = check(altered);
    assert.equal(differs.status, 1, differs.stdout);
    assert.match(differs.stderr, /^ {2}- function createPluginNode: \(\) => void$/m);
    assert.match(differs.stderr, /npm run api-report/);
  } finally {
    reportDir.remove();
  }
});

/**
 * Every gRPC server on a unix socket goes through src/unix-grpc
 * (`listenUnixGrpc`), which accepts the :authority grpc-go sends. grpc-js's
 * own binding refuses it (nghttp2), so a server bound another way would break
 * Go clients again. The patterns are split so this file does not match them.
 */
const SERVER_BINDINGS = [
  new RegExp(`\\.${'bind'}Async\\s*\\(`),
  new RegExp(`${'createConnection'}Injector\\s*\\(`),
];
const TRANSPORT_DIR = 'src/unix-grpc/';

function serverBindingsOutsideTransport(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name === 'gen' || name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.[cm]?[jt]s$/.test(name)) {
        const path = relative(root, full);
        if (path.startsWith(TRANSPORT_DIR)) continue;
        const text = readFileSync(full, 'utf8');
        if (SERVER_BINDINGS.some((pattern) => pattern.test(text))) found.push(path);
      }
    }
  };
  for (const top of ['src', 'test', 'bench', 'scripts']) {
    try {
      walk(join(root, top));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return found;
}

test('every gRPC server on a unix socket listens through src/unix-grpc (listenUnixGrpc)', () => {
  assert.deepEqual(
    serverBindingsOutsideTransport(repoRoot),
    [],
    'bind unix-socket gRPC servers with listenUnixGrpc from src/unix-grpc: grpc-js binding them itself refuses the :authority grpc-go sends',
  );
});

test('the unix-grpc guard finds a server bound another way', (t) => {
  const dir = plantTree({
    'src/alpha/serve.ts': `server.${'bind'}Async('unix:/tmp/x.sock', creds, () => {});\n`,
    'test/fixtures/serve.ts': `const i = server.${'createConnection'}Injector(creds);\n`,
    'src/unix-grpc/unix-grpc-server.ts': `server.${'createConnection'}Injector(creds);\n`,
  });
  t.after(() => dir.remove());
  assert.deepEqual(serverBindingsOutsideTransport(dir.path).sort(), [
    'src/alpha/serve.ts',
    'test/fixtures/serve.ts',
  ]);
});
