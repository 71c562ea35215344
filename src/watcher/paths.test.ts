import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isHiddenBelow, isWithin } from './paths.js';

describe('watcher path rules', () => {
  it('hides any segment below the root that starts with a dot, but not the root’s own path', () => {
    const root = '/home/user/.local/state/berth/registry';
    assert.equal(isHiddenBelow(root, root), false);
    assert.equal(isHiddenBelow(root, `${root}/a.sock`), false);
    assert.equal(isHiddenBelow(root, `${root}/sub/dir/a.sock`), false);
    assert.equal(isHiddenBelow(root, `${root}/.a.sock`), true);
    assert.equal(isHiddenBelow(root, `${root}/.cache/a.sock`), true);
    assert.equal(isHiddenBelow(root, `${root}/sub/.git/deep/a.sock`), true);
    assert.equal(isHiddenBelow(root, `${root}/sub.d/a.sock`), false);
    assert.equal(isHiddenBelow(`${root}/`, `${root}/a.sock`), false);
    assert.equal(isHiddenBelow(`${root}/`, `${root}/.a.sock`), true);
  });

  it('decides paths that are not plainly below the root as path.relative() sees them', () => {
    const root = '/srv/plugins';
    assert.equal(isHiddenBelow(root, '/srv/plugins/./a.sock'), false);
    assert.equal(isHiddenBelow(root, '/srv/plugins//a.sock'), false);
    assert.equal(isHiddenBelow(root, '/srv/plugins/x/../a.sock'), false);
    assert.equal(isHiddenBelow(root, '/srv/plugins/x/../.a.sock'), true);
    assert.equal(isHiddenBelow(root, '/srv/plugins-other/a.sock'), true);
    assert.equal(isHiddenBelow(root, '/srv/a.sock'), true);
  });

  it('tells whether a path is a directory or below it, without prefix confusion', () => {
    assert.ok(isWithin('/r', '/r'));
    assert.ok(isWithin('/r/a/b', '/r'));
    assert.ok(isWithin('/r/a', '/r/'));
    assert.ok(!isWithin('/rx/a', '/r'));
    assert.ok(!isWithin('/r', '/r/a'));
  });
});
