/**
 * The lifecycle contract (src/common/lifecycle.ts) against every long-lived
 * component of the registration pipeline: start, a double stop, dispose
 * after stop, and stop before start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActualStateOfWorld, createDesiredStateOfWorld } from '../src/cache/index.js';
import { type Lifecycle, silentLogger } from '../src/common/index.js';
import { createOperationExecutor } from '../src/executor/index.js';
import { createHandlerTable } from '../src/handlers/index.js';
import { createLivenessProber, createPluginManager } from '../src/plugin-manager/index.js';
import { createPluginNode } from '../src/plugin-node/index.js';
import { createReconciler } from '../src/reconciler/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { createTempDir, FakeClock } from '../src/testing/index.js';
import { createPluginWatcher } from '../src/watcher/index.js';

type Factory = (dir: string) => Lifecycle;

const clock = () => new FakeClock();
const executor = () =>
  createOperationExecutor({ clock: clock(), logger: silentLogger, dial: dialRegistration });

const components: Record<string, Factory> = {
  executor,
  reconciler: () =>
    createReconciler({
      desiredState: createDesiredStateOfWorld(),
      actualState: createActualStateOfWorld(),
      executor: executor(),
      handlers: createHandlerTable(),
      clock: clock(),
      logger: silentLogger,
    }),
  liveness: () =>
    createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 100,
      failureThreshold: 1,
      clock: clock(),
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: () => {},
    }),
  watcher: (dir) => createPluginWatcher({ dir, desiredState: createDesiredStateOfWorld() }),
  'plugin manager': (dir) => createPluginManager({ pluginsDir: dir }),
  'plugin node': (dir) => createPluginNode({ pluginsDir: dir }),
};

describe('lifecycle contract of the pipeline components', () => {
  for (const [name, create] of Object.entries(components)) {
    it(`${name}: start, double stop, dispose after stop`, async (t) => {
      const dir = createTempDir();
      t.after(() => dir.remove());
      const component = create(dir.join('plugins'));
      assert.equal(component.state, 'new');
      await component.start();
      assert.equal(component.state, 'running');
      const first = component.stop();
      const second = component.stop();
      await Promise.all([first, second]);
      assert.equal(component.state, 'stopped');
      await component[Symbol.asyncDispose]();
      assert.equal(component.state, 'stopped');
    });

    it(`${name}: stop before start ends stopped, and a later start is refused`, async (t) => {
      const dir = createTempDir();
      t.after(() => dir.remove());
      const component = create(dir.join('plugins'));
      await component.stop();
      assert.equal(component.state, 'stopped');
      await assert.rejects(component.start());
      assert.equal(component.state, 'stopped');
    });
  }
});
