/**
 * The lifecycle contract (src/common/lifecycle.ts), run against every
 * long-lived component: start, a double stop (one memoised promise), dispose
 * after stop, and stop before start. A new long-lived component adds one
 * entry to COMPONENTS.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import {
  type Lifecycle,
  LifecycleController,
  type LifecycleState,
  systemClock,
} from '../src/common/index.js';
import { EventBus } from '../src/daemon/index.js';
import { createEtcdSource } from '../src/objects/etcd.js';
import {
  createDirectorySource,
  createMemorySource,
  createObjectManagers,
  createWatchBasedManager,
  createWatchStore,
  getSecretNames,
} from '../src/objects/index.js';
import { createKubernetesSource } from '../src/objects/kubernetes.js';
import { createTempDir, FakeClock } from '../src/testing/index.js';

interface Made {
  subject: Lifecycle;
  /** Releases what the factory made besides the subject (dirs, sources it was given). */
  cleanup?: () => Promise<void> | void;
}

const STATES: readonly LifecycleState[] = ['new', 'starting', 'running', 'stopping', 'stopped'];

/** Every long-lived component, made with small real dependencies. */
const COMPONENTS: Record<string, () => Made | Promise<Made>> = {
  'LifecycleController (the shared implementation)': () => ({ subject: new LifecycleController() }),
  'event bus': () => ({ subject: new EventBus({ clock: new FakeClock() }) }),
  'memory source': () => ({ subject: createMemorySource() }),
  'directory source': () => {
    const dir = createTempDir();
    return {
      subject: createDirectorySource({ root: dir.path, clock: new FakeClock() }),
      cleanup: () => dir.remove(),
    };
  },
  'etcd source': () => ({
    // No call is made in this test, so no etcd is needed: the client connects lazily.
    subject: createEtcdSource({ endpoints: ['127.0.0.1:1'], clock: new FakeClock() }),
  }),
  'kubernetes source': () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return { subject: createKubernetesSource({ kubeConfig }) };
  },
  'watch store': () => {
    const source = createMemorySource();
    return {
      subject: createWatchStore({
        source,
        resource: 'secrets',
        clock: new FakeClock(),
        maxIdleTimeMs: 60_000,
      }),
      cleanup: () => source.stop(),
    };
  },
  'watch-based manager': () => {
    const source = createMemorySource();
    return {
      subject: createWatchBasedManager({
        source,
        resource: 'secrets',
        getReferencedObjects: getSecretNames,
        clock: new FakeClock(),
      }),
      cleanup: () => source.stop(),
    };
  },
  'object managers': () => {
    const source = createMemorySource();
    return {
      subject: createObjectManagers({ source, clock: systemClock }),
      cleanup: () => source.stop(),
    };
  },
};

function assertState(subject: Lifecycle, expected: LifecycleState): void {
  assert.ok(STATES.includes(subject.state), `state ${String(subject.state)} is one of ${STATES.join('|')}`);
  assert.equal(subject.state, expected);
}

for (const [name, make] of Object.entries(COMPONENTS)) {
  describe(`lifecycle contract: ${name}`, () => {
    it('start, then a double stop: one memoised promise, ends stopped', async (t) => {
      const { subject, cleanup } = await make();
      t.after(async () => {
        await subject.stop();
        await cleanup?.();
      });
      assertState(subject, 'new');
      await subject.start();
      assertState(subject, 'running');
      await subject.start(); // idempotent
      assertState(subject, 'running');
      const first = subject.stop();
      const second = subject.stop();
      assert.equal(first, second, 'stop() returns the same promise every time');
      await first;
      assertState(subject, 'stopped');
    });

    it('dispose after stop resolves and changes nothing', async (t) => {
      const { subject, cleanup } = await make();
      t.after(() => cleanup?.());
      await subject.start();
      await subject.stop();
      await subject[Symbol.asyncDispose]();
      assertState(subject, 'stopped');
    });

    it('stop before start ends stopped, and a later start does not bring it back', async (t) => {
      const { subject, cleanup } = await make();
      t.after(() => cleanup?.());
      await subject.stop();
      assertState(subject, 'stopped');
      await subject.start().catch(() => undefined);
      assertState(subject, 'stopped');
    });

    it('aborting the start signal stops it', async (t) => {
      const { subject, cleanup } = await make();
      t.after(async () => {
        await subject.stop();
        await cleanup?.();
      });
      const controller = new AbortController();
      await subject.start(controller.signal);
      controller.abort();
      await subject.stop();
      assertState(subject, 'stopped');
    });
  });
}
