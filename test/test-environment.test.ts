/**
 * The suite runs in its own home (scripts/run-tests.mjs): no test can read or
 * write the real ~/.local/state/berth, XDG dirs or a developer's BERTH_*
 * settings. This fails when the tests are started some other way, under the
 * real home (say `node --test dist/...`), which would let a daemon started by
 * `npm start` change what they see.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { defaultDataDir } from '../src/daemon/contract.js';

const inside = (path: string, dir: string) => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith('/');
};

test('the tests run in a private temp home, with no BERTH_* settings', () => {
  const home = process.env.HOME ?? '';
  assert.notEqual(home, userInfo().homedir, 'HOME is the real home of this user');
  assert.ok(inside(home, '/tmp') || inside(home, tmpdir()), `HOME ${home} is not a temp dir`);
  assert.ok(statSync(home).isDirectory());
  for (const name of [
    'XDG_STATE_HOME',
    'XDG_CONFIG_HOME',
    'XDG_DATA_HOME',
    'XDG_CACHE_HOME',
    'XDG_RUNTIME_DIR',
  ]) {
    const value = process.env[name];
    assert.ok(value !== undefined && inside(value, home), `${name}=${value} is outside the test home`);
  }
  assert.deepEqual(
    Object.keys(process.env).filter(
      (key) => key.startsWith('BERTH_') || /^npm_config_userconfig$/i.test(key),
    ),
    [],
  );
  // What berth itself would pick with no flags lands in the test home.
  assert.ok(inside(defaultDataDir(), home), defaultDataDir());
  assert.equal(defaultDataDir(), join(home, '.local', 'state', 'berth'));
});
