/**
 * The published package's surface: what `npm pack` ships, and what the entry
 * points export. Tests and test helpers stay out of both, except the helpers
 * that are the `berth/testing` entry point on purpose.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../' : '../', import.meta.url),
);

interface PackageJson {
  sideEffects?: unknown;
  exports: Record<string, string | { types: string; default: string }>;
}
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as PackageJson;

/** Names a module exports: `export { a, type B as C } from`, and exported declarations. */
function exportedNames(source: string): Map<string, string | undefined> {
  const names = new Map<string, string | undefined>();
  for (const m of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}(?:\s*from\s*'([^']+)')?/g)) {
    for (const part of (m[1] ?? '').split(',')) {
      const item = part.trim().replace(/^type\s+/, '');
      if (item === '') continue;
      const [local, alias] = item.split(/\s+as\s+/);
      names.set((alias ?? local ?? '').trim(), m[2]);
    }
  }
  const declaration =
    /export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g;
  for (const m of source.matchAll(declaration)) names.set(m[1] ?? '', undefined);
  return names;
}

/** The source file of every package entry point except berth/testing. */
function nonTestingEntries(): string[] {
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './testing' && subpath !== './package.json')
    .map(([, target]) => (typeof target === 'string' ? target : target.default))
    .map((target) => target.replace('./dist/', '').replace(/\.js$/, '.ts'));
}

const TEST_HELPER_NAME = /^(count|gated|fake|test|newTest|mock|stub|recording)/i;

describe('the npm package', () => {
  it('npm pack ships no tests and no test helpers outside the testing entry point', () => {
    const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const [packed] = JSON.parse(result.stdout) as Array<{ files: Array<{ path: string }> }>;
    const files = (packed?.files ?? []).map((f) => f.path);
    assert.ok(files.includes('dist/src/common/index.js'), 'the build output is packed');
    assert.ok(files.includes('dist/src/testing/index.js'), 'berth/testing is packed');
    // berth's own harness (etcd, the fleet, the plugin farm, test drivers) is built but not shipped.
    assert.ok(existsSync(join(repoRoot, 'dist/src/testing/harness/index.js')), 'the harness is built');
    assert.deepEqual(
      files.filter((f) => /^(dist\/)?src\/testing\/harness\//.test(f)),
      [],
      'the test harness (src/testing/harness/) in the package',
    );

    const tests = files.filter((f) =>
      /\.test\.[cm]?[jt]s|\.test\.d\.ts|\.test-support\.|test-fixtures/.test(f),
    );
    assert.deepEqual(tests, [], 'test files in the package');
    // deploy/: the Containerfile, the DaemonSet and the systemd unit (test/package-contents.test.ts).
    // dist/bundle/: the CLI and daemon bundled by scripts/build.mjs (the bin loads them).
    const outsideSrc = files.filter(
      (f) => !/^(dist\/src|dist\/bundle|src|docs|deploy)\//.test(f) && !/^[^/]+$/.test(f),
    );
    assert.deepEqual(outsideSrc, [], 'files from test/, bench/ or elsewhere in the package');

    // A helper module of src/testing, found under another folder, is a helper that leaked.
    const helperModules = new Set(
      [
        ...readdirSync(join(repoRoot, 'src', 'testing')),
        ...readdirSync(join(repoRoot, 'src', 'testing', 'harness')),
      ]
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'index.ts')
        .map((f) => f.replace(/\.ts$/, '')),
    );
    const leaked = files.filter(
      (f) =>
        !/^(dist\/)?src\/testing\//.test(f) &&
        helperModules.has(basename(f).replace(/\.(d\.ts|js\.map|js|ts)$/, '')),
    );
    assert.deepEqual(leaked, [], 'test helper modules outside src/testing');
  });

  it('declares itself free of import side effects', () => {
    assert.equal(pkg.sideEffects, false);
  });
});

describe('entry points', () => {
  const testingNames = new Set([
    ...exportedNames(readFileSync(join(repoRoot, 'src', 'testing', 'index.ts'), 'utf8')).keys(),
    ...exportedNames(readFileSync(join(repoRoot, 'src', 'testing', 'harness', 'index.ts'), 'utf8')).keys(),
  ]);

  it('the testing entry point exports the helpers this check looks for', () => {
    // Guards the guard: if the parser stopped finding names, the checks below would pass vacuously.
    for (const name of [
      'FakeClock',
      'countingSource',
      'gatedSource',
      'newTestExamplePlugin',
      'createTempDir',
    ]) {
      assert.ok(testingNames.has(name), `${name} exported by src/testing/index.ts`);
    }
  });

  for (const entry of nonTestingEntries()) {
    it(`${entry} exports no test helper`, () => {
      const names = exportedNames(readFileSync(join(repoRoot, entry), 'utf8'));
      assert.ok(names.size > 0, `${entry} exports something`);
      const offending = [...names].filter(
        ([name, from]) =>
          testingNames.has(name) || TEST_HELPER_NAME.test(name) || (from?.includes('testing/') ?? false),
      );
      assert.deepEqual(
        offending.map(([name, from]) => `${name}${from ? ` (from ${from})` : ''}`),
        [],
        `${entry} exports test helpers; export them from src/testing/index.ts only`,
      );
    });
  }
});

describe('the entry points are the public files', () => {
  it('every exports subpath maps to a public entry, never to a folder index.ts with internal names', () => {
    const targets = Object.entries(pkg.exports)
      .filter(([subpath]) => subpath !== './package.json')
      .map(([subpath, target]) => [subpath, typeof target === 'string' ? target : target.default] as const);
    const light = /\/(public|public-contract|etcd|kubernetes)\.js$|^\.\/dist\/src\/testing\/index\.js$/;
    assert.deepEqual(
      targets.filter(([, target]) => !light.test(target)).map(([subpath]) => subpath),
      [],
      'subpaths whose entry is not public.ts (index.ts also carries names for berth folders only)',
    );
  });

  it('names only berth folders use are not reachable through the package', async () => {
    // Each is exported by its folder's index.ts for another berth folder; the package's entry leaves it out.
    const internal: Array<[string, string]> = [
      ['berth/common', 'AsyncQueue'],
      ['berth/common', 'goQuote'],
      ['berth/storage', 'SmallSqliteFile'],
      ['berth/registration', 'enforcePluginInfoBounds'],
      ['berth/objects', 'createWatchStore'],
      ['berth/registry', 'createRegistryBridge'],
    ];
    for (const [subpath, name] of internal) {
      const index = (await import(`../src/${subpath.slice('berth/'.length)}/index.js`)) as Record<
        string,
        unknown
      >;
      assert.ok(name in index, `${name} is still exported by its folder's index.ts (guards the guard)`);
      const entry = (await import(subpath)) as Record<string, unknown>;
      assert.ok(!(name in entry), `${subpath} exports ${name}`);
    }
    await assert.rejects(import(`berth/${'objects'}/index`), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
    await assert.rejects(import(`berth/${'executor'}`), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  });
});
