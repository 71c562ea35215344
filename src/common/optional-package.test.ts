import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createTempDir } from '../testing/index.js';
import { isBerthError } from './errors.js';
import { loadOptionalPackage } from './optional-package.js';

/**
 * Real ESM resolution failures: a module in a temp dir under /tmp has no
 * node_modules above it, so its bare import of a package fails the way an
 * install without the optional peer does.
 */
function moduleImporting(dir: string, name: string, body: string): () => Promise<unknown> {
  const file = `${dir}/${name}.mjs`;
  writeFileSync(file, body);
  return () => import(pathToFileURL(file).href);
}

describe('loadOptionalPackage', () => {
  it('turns the missing package into BERTH_DEPENDENCY_MISSING with the install command', async () => {
    await using dir = createTempDir('berth-optpkg-');
    const load = moduleImporting(dir.path, 'needs-etcd', "export { Etcd3 } from 'etcd3';\n");
    const err = await loadOptionalPackage('etcd3', 'objects.source type etcd', load).then(
      () => assert.fail('the import should fail: no etcd3 above /tmp'),
      (e: unknown) => e,
    );
    assert.ok(isBerthError(err, 'BERTH_DEPENDENCY_MISSING'), String(err));
    assert.equal(
      err.message,
      "objects.source type etcd needs the optional package etcd3, which is not installed; install it beside berth: npm install 'etcd3@^1.1.2'",
    );
    assert.deepEqual(err.details, { package: 'etcd3' });
    assert.equal((err.cause as { code?: string }).code, 'ERR_MODULE_NOT_FOUND');
  });

  it('rethrows a different missing package unchanged (a broken install is not a missing peer)', async () => {
    await using dir = createTempDir('berth-optpkg-');
    const load = moduleImporting(dir.path, 'needs-other', "import 'berth-no-such-package';\n");
    await assert.rejects(
      loadOptionalPackage('@kubernetes/client-node', 'objects.source type kubernetes', load),
      {
        code: 'ERR_MODULE_NOT_FOUND',
        message: /'berth-no-such-package'/,
      },
    );
  });

  it('rethrows a failure inside the loaded module unchanged', async () => {
    await using dir = createTempDir('berth-optpkg-');
    const load = moduleImporting(dir.path, 'throws', "throw new Error('etcd3 is broken');\n");
    await assert.rejects(loadOptionalPackage('etcd3', 'the cluster: section', load), {
      message: 'etcd3 is broken',
    });
  });

  it('returns the module when the package is there', async () => {
    const mod = await loadOptionalPackage('etcd3', 'the cluster: section', () => import('etcd3'));
    assert.equal(typeof mod.Etcd3, 'function');
  });
});
