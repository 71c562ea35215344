import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTempDir, waitFor } from '../testing/index.js';
import { TreeWatch } from './tree-watch.js';

describe('TreeWatch (one watch per directory)', () => {
  it('reports entries of every added directory and drops watches below a removed one', async (t) => {
    const tmp = createTempDir('bw-');
    const root = tmp.join('root');
    mkdirSync(join(root, 'sub', 'deeper'), { recursive: true });
    const seen = new Set<string | undefined>();
    const tree = new TreeWatch({ root, native: false, onPath: (p) => seen.add(p), onError: () => {} });
    t.after(() => {
      tree.close();
      tmp.remove();
    });
    tree.add(root, 'root-1');
    tree.add(join(root, 'sub'), 'sub-1');
    tree.add(join(root, 'sub', 'deeper'), 'deeper-1');
    writeFileSync(join(root, 'sub', 'deeper', 'f'), 'x');
    await waitFor('the event from the deepest directory', () => seen.has(join(root, 'sub', 'deeper', 'f')));
    assert.ok(tree.isWatching(join(root, 'sub')));

    tree.removeWithin(join(root, 'sub'));
    assert.ok(!tree.isWatching(join(root, 'sub')));
    assert.ok(!tree.isWatching(join(root, 'sub', 'deeper')));
    assert.ok(tree.isWatching(root));

    tree.close();
    assert.ok(!tree.isWatching(root));
    tree.add(root, 'root-2');
    assert.ok(!tree.isWatching(root), 'a closed tree adds nothing');
  });

  it('replaces the watch of a directory that has a new identity (re-created under the same name)', async (t) => {
    const tmp = createTempDir('bw-');
    const root = tmp.join('root');
    mkdirSync(root);
    const seen = new Set<string | undefined>();
    const tree = new TreeWatch({ root, native: false, onPath: (p) => seen.add(p), onError: () => {} });
    t.after(() => {
      tree.close();
      tmp.remove();
    });
    tree.add(root, 'first');
    // The directory is replaced: the first watch is left on a dead inode and never reports again.
    rmSync(root, { recursive: true });
    mkdirSync(root);
    tree.add(root, 'second');
    writeFileSync(join(root, 'after-replace'), 'x');
    await waitFor('an event through the replacement watch', () => seen.has(join(root, 'after-replace')));
  });
});
