/**
 * The lifecycle contract (src/common/lifecycle.ts), run against every
 * long-lived component: start, a double stop (one memoised promise), dispose
 * after stop, stop before start, and a stop by aborting start's signal alone.
 * A new long-lived component adds one entry to COMPONENTS. A planted
 * component that ignores its signal proves the abort case can fail.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import { createActualStateOfWorld, createDesiredStateOfWorld } from '../src/cache/index.js';
import { ClusterReader, ClusterWriter, registryPluginSource } from '../src/cluster/index.js';
import {
  type Lifecycle,
  LifecycleController,
  type LifecycleState,
  silentLogger,
  systemClock,
} from '../src/common/index.js';
import { createDaemon, EventBus, resolveDaemonConfig } from '../src/daemon/index.js';
import { createOperationExecutor } from '../src/executor/index.js';
import { createCsiHandler } from '../src/handlers/csi/index.js';
import { createDevicePluginManager } from '../src/handlers/device-plugin/index.js';
import { createDraHandler } from '../src/handlers/dra/index.js';
import { createHandlerTable } from '../src/handlers/index.js';
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
import { createLivenessProber, createPluginManager } from '../src/plugin-manager/index.js';
import { createPluginNode } from '../src/plugin-node/index.js';
import { createReconciler } from '../src/reconciler/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { createGrpcDispenser, createRegistry } from '../src/registry/index.js';
import { createMemoryStorage, createSqliteStorage } from '../src/storage/index.js';
import { type EtcdServer, recordingServices, startEtcdServer } from '../src/testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../src/testing/index.js';
import { VolumeManager } from '../src/volumes/index.js';
import { createPluginWatcher } from '../src/watcher/index.js';

interface Made {
  subject: Lifecycle;
  /** Releases what the factory made besides the subject (dirs, sources it was given). */
  cleanup?: () => Promise<void> | void;
}

const STATES: readonly LifecycleState[] = ['new', 'starting', 'running', 'stopping', 'stopped'];

const executor = () =>
  createOperationExecutor({ clock: new FakeClock(), logger: silentLogger, dial: dialRegistration });

/** One real etcd for the cluster writer and reader, started on first use. */
let etcd: Promise<EtcdServer> | undefined;
after(async () => {
  await (await etcd)?.stop();
});
async function etcdClient(): Promise<Etcd3> {
  etcd ??= startEtcdServer();
  return new Etcd3({ hosts: (await etcd).endpoint });
}

/** A component made over its own plugins directory, removed afterwards. */
function inPluginsDir(make: (pluginsDir: string) => Lifecycle): () => Made {
  return () => {
    const dir = createTempDir();
    return { subject: make(dir.join('plugins')), cleanup: () => dir.remove() };
  };
}

/** Every long-lived component, made with small real dependencies. */
const COMPONENTS: Record<string, () => Made | Promise<Made>> = {
  'LifecycleController (the shared implementation)': () => ({ subject: new LifecycleController() }),
  // The registration pipeline.
  watcher: inPluginsDir((dir) => createPluginWatcher({ dir, desiredState: createDesiredStateOfWorld() })),
  executor: () => ({ subject: executor() }),
  reconciler: () => ({
    subject: createReconciler({
      desiredState: createDesiredStateOfWorld(),
      actualState: createActualStateOfWorld(),
      executor: executor(),
      handlers: createHandlerTable(),
      clock: new FakeClock(),
      logger: silentLogger,
    }),
  }),
  liveness: () => ({
    subject: createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 100,
      failureThreshold: 1,
      clock: new FakeClock(),
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: () => {},
    }),
  }),
  'plugin manager': inPluginsDir((pluginsDir) => createPluginManager({ pluginsDir })),
  'plugin node (the library facade)': inPluginsDir((pluginsDir) => createPluginNode({ pluginsDir })),
  // The composition root: the whole daemon over its own data directory.
  daemon: () => {
    const dir = createTempDir();
    const config = resolveDaemonConfig(
      {},
      { dataDir: dir.path, pluginsDir: dir.join('plugins') },
      { env: {} },
    );
    return { subject: createDaemon(config, { logger: silentLogger }), cleanup: () => dir.remove() };
  },
  // The registry and its storage.
  // The daemon's own.
  'event bus': () => ({ subject: new EventBus({ clock: new FakeClock() }) }),
  registry: () => ({ subject: createRegistry() }),
  'registry over SQLite storage': () => {
    const dir = createTempDir();
    const storage = createSqliteStorage({ path: dir.join('registry.db') });
    return {
      subject: createRegistry({ storage }),
      // The registry never stops its storage: its owner does, after the registry.
      cleanup: async () => {
        await storage.stop();
        dir.remove();
      },
    };
  },
  'memory storage': () => ({ subject: createMemoryStorage() }),
  'SQLite storage': () => {
    const dir = createTempDir();
    return { subject: createSqliteStorage({ path: dir.join('state.db') }), cleanup: () => dir.remove() };
  },
  'gRPC dispenser': () => ({ subject: createGrpcDispenser() }),
  // Built-in handlers with a life of their own.
  'CSI handler': () => ({ subject: createCsiHandler(recordingServices()) }),
  'CSI volume manager': () => {
    const dir = createTempDir();
    return {
      subject: new VolumeManager({
        statePath: dir.join('csi-volumes.db'),
        mountRoot: dir.join('csi'),
        drivers: { lookup: () => undefined },
        callTimeoutMs: 1_000,
        operationTimeoutMs: 1_000,
        clock: new FakeClock(),
        logger: silentLogger,
      }),
      cleanup: () => dir.remove(),
    };
  },
  'DRA handler': () => ({ subject: createDraHandler(recordingServices({ clock: new FakeClock() })) }),
  'device plugin manager': () => {
    const dir = createTempDir();
    return {
      subject: createDevicePluginManager({
        databasePath: dir.join('devices.db'),
        socketDir: dir.join('device-plugins'),
        clock: new FakeClock(),
      }),
      cleanup: () => dir.remove(),
    };
  },
  // The cluster view (each test gets its own key prefix).
  'cluster writer': async () => {
    const registry = createRegistry();
    await registry.start();
    return {
      subject: new ClusterWriter({
        client: await etcdClient(),
        ownsClient: true,
        source: registryPluginSource(registry),
        nodeName: 'node-a',
        prefix: `/lifecycle-${Math.random().toString(36).slice(2)}/`,
        callTimeoutMs: 10_000,
      }),
      cleanup: () => registry.stop(),
    };
  },
  'cluster reader': async () => ({
    subject: new ClusterReader({
      client: await etcdClient(),
      ownsClient: true,
      prefix: `/lifecycle-${Math.random().toString(36).slice(2)}/`,
      callTimeoutMs: 10_000,
    }),
  }),
  // The object manager.
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
      const starting = subject.start();
      assert.equal(subject.start(), starting, 'start() is memoised too');
      await starting;
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

    it('aborting the start signal alone stops it', async (t) => {
      const { subject, cleanup } = await make();
      t.after(async () => {
        await subject.stop();
        await cleanup?.();
      });
      await assertAbortStops(subject);
    });
  });
}

/** Starts `subject` with a signal, aborts the signal (and nothing else), and waits for 'stopped'. */
async function assertAbortStops(subject: Lifecycle, timeoutMs = 30_000): Promise<void> {
  const controller = new AbortController();
  await subject.start(controller.signal);
  assertState(subject, 'running');
  controller.abort();
  await waitFor(
    `${subject.constructor.name} to stop after its start signal aborted`,
    () => subject.state === 'stopped',
    {
      timeoutMs,
    },
  );
}

describe('lifecycle contract: the abort case can fail', () => {
  /** A component that keeps the contract except that it ignores start's signal. */
  class IgnoresSignal implements Lifecycle {
    readonly #controller = new LifecycleController();
    get state(): LifecycleState {
      return this.#controller.state;
    }
    start(_signal?: AbortSignal): Promise<void> {
      return this.#controller.start();
    }
    stop(): Promise<void> {
      return this.#controller.stop();
    }
    [Symbol.asyncDispose](): Promise<void> {
      return this.stop();
    }
  }

  it('fails for a component that ignores the signal, and passes once the signal is honoured', async () => {
    const planted = new IgnoresSignal();
    await assert.rejects(assertAbortStops(planted, 200), /to stop after its start signal aborted/);
    assertState(planted, 'running');
    await planted.stop();
    await assertAbortStops(new LifecycleController());
  });
});
