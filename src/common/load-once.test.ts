import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadOnce } from './load-once.js';

test('loadOnce loads once and gives every caller the same module', async () => {
  let loads = 0;
  const module = { name: 'wire' };
  const load = loadOnce(async () => {
    loads += 1;
    return module;
  });
  const [a, b] = await Promise.all([load(), load()]);
  assert.equal(await load(), module);
  assert.equal(a, module);
  assert.equal(b, module);
  assert.equal(loads, 1);
});

test('loadOnce forgets a failed load: the next caller loads again', async () => {
  let loads = 0;
  const load = loadOnce(async () => {
    loads += 1;
    if (loads === 1) throw new Error('EMFILE while loading');
    return 'loaded';
  });
  await assert.rejects(load(), /EMFILE while loading/);
  assert.equal(await load(), 'loaded');
  assert.equal(await load(), 'loaded');
  assert.equal(loads, 2);
});
