/**
 * The lifecycle contract (src/common/lifecycle.ts) for the registry's and the
 * storage's long-lived components: start, a double stop, dispose after stop,
 * and stop before start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Lifecycle } from '../common/index.js';
import { createMemoryStorage, createSqliteStorage } from '../storage/index.js';
import { createTempDir } from '../testing/index.js';
import { createGrpcDispenser, createRegistry } from './index.js';

const components: Array<{ name: string; create(dir: string): Lifecycle }> = [
  { name: 'registry', create: () => createRegistry() },
  {
    name: 'registry with SQLite storage',
    create: (dir) => createRegistry({ storage: createSqliteStorage({ path: `${dir}/r.db` }) }),
  },
  { name: 'memory storage', create: () => createMemoryStorage() },
  { name: 'SQLite storage', create: (dir) => createSqliteStorage({ path: `${dir}/s.db` }) },
  { name: 'gRPC dispenser', create: () => createGrpcDispenser() },
];

describe('lifecycle contract', () => {
  for (const { name, create } of components) {
    it(`${name}: start, double stop, dispose after stop, stop before start`, async (t) => {
      const dir = createTempDir();
      t.after(() => dir.remove());
      const component = create(dir.path);
      assert.equal(component.state, 'new');
      const starting = component.start();
      assert.equal(component.start(), starting, 'start is memoised');
      await starting;
      assert.equal(component.state, 'running');
      const stopping = component.stop();
      assert.equal(component.stop(), stopping, 'stop is memoised');
      await stopping;
      assert.equal(component.state, 'stopped');
      await component[Symbol.asyncDispose]();
      assert.equal(component.state, 'stopped');

      const never = create(dir.path);
      await never.stop();
      assert.equal(never.state, 'stopped', 'stop before start');
      await assert.rejects(never.start(), /stopped/);

      const aborted = create(dir.path);
      const controller = new AbortController();
      await aborted.start(controller.signal);
      controller.abort();
      await aborted.stop();
      assert.equal(aborted.state, 'stopped', 'an aborted start signal stops it');
    });
  }
});
