/**
 * What `npm pack` ships: the compiled sources, LICENSE, CHANGELOG, README,
 * docs and deploy/ (Containerfile, DaemonSet, systemd unit), and no tests or
 * fixtures. Listed with `npm pack --dry-run` against the built tree (the
 * prepack build itself and installing the tarball are checked by
 * scripts/check-package.sh in .ci/run: that install compiles better-sqlite3,
 * minutes here: 23 min measured while eight builds shared this 2-core machine).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { OPTIONAL_PACKAGES } from '../src/common/index.js';

const repoRoot = new URL(import.meta.url.includes('/dist/') ? '../../' : '../', import.meta.url);
const rootPath = fileURLToPath(repoRoot);
const read = (path: string) => readFileSync(new URL(path, repoRoot), 'utf8');

interface PackageJson {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  scripts: Record<string, string>;
}
const pkg = JSON.parse(read('package.json')) as PackageJson;

async function packedFiles(): Promise<string[]> {
  // --ignore-scripts: the suite runs on the tree `npm test` just built; prepack would rebuild it.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: rootPath,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return report.files.map((f) => f.path).sort();
}

describe('npm pack', () => {
  let files: Promise<string[]> | undefined;
  const listing = () => {
    files ??= packedFiles();
    return files;
  };

  it('ships the build, LICENSE, CHANGELOG, README, docs and deploy/', async () => {
    const packed = new Set(await listing());
    for (const path of [
      'package.json',
      'LICENSE',
      'CHANGELOG.md',
      'README.md',
      'docs/config.md',
      'deploy/Containerfile',
      'deploy/kubernetes/daemonset.yaml',
      'deploy/systemd/berth.service',
      'dist/src/cli/main.cjs',
    ]) {
      assert.ok(packed.has(path), `${path} is not in the package`);
    }
    for (const target of [...Object.values(pkg.bin), ...Object.values(pkg.exports)]) {
      const paths = typeof target === 'string' ? [target] : [target.types, target.default];
      for (const path of paths) assert.ok(packed.has(path.replace(/^\.\//, '')), `${path} (exports/bin)`);
    }
  });

  it('ships no tests, test fixtures, benchmarks or scripts', async () => {
    const unwanted = (await listing()).filter(
      (path) =>
        /\.test\./.test(path) ||
        /(^|\/)(fixtures?|testdata)\//.test(path) ||
        /^(test|bench|scripts|\.ci|dist\/test|dist\/bench)\//.test(path),
    );
    assert.deepEqual(unwanted, []);
  });

  it('has a prepack that builds, the Apache-2.0 text and a changelog entry for this version', () => {
    assert.match(pkg.scripts.prepack ?? '', /npm run build/);
    assert.equal(pkg.license, 'Apache-2.0');
    assert.match(read('LICENSE'), /^\s*Apache License\s+Version 2\.0, January 2004/);
    assert.match(read('CHANGELOG.md'), new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\]`, 'm'));
  });

  it('declares the heavy clients as optional peers, kept as dev dependencies for the suite', () => {
    assert.deepEqual(pkg.peerDependencies, OPTIONAL_PACKAGES);
    for (const name of Object.keys(OPTIONAL_PACKAGES) as (keyof typeof OPTIONAL_PACKAGES)[]) {
      assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} optional`);
      assert.equal(pkg.devDependencies[name], pkg.peerDependencies[name], `${name} in devDependencies`);
      assert.equal(pkg.dependencies[name], undefined, `${name} is not a dependency`);
    }
  });
});
