/**
 * Property-based tests (fast-check) of the registration pipeline on real
 * unix sockets and real gRPC plugins: random sequences of socket create,
 * delete, re-create and rename, handler failures, storage failures and
 * restarts of the plugin manager and registry (state kept in the storage).
 *
 * Invariants:
 * - per plugin name, handler calls are strictly validate -> register ->
 *   deregister, and never overlap (RecordingHandler checks each call);
 * - the registry never lists a plugin at the moment it is told Notify(false),
 *   once restored state has settled: while a restart restores, instances read
 *   from storage stay listed until their plugins answer again (the daemon is
 *   not ready then; restore-settle.ts), and one refused then is dropped when
 *   the restore settles (bridge.reconcileRestored keeps registered ones only);
 * - once failures stop, the actual state (registered sockets) equals the live
 *   sockets, and the registry equals the actual state.
 *
 * The storage is the in-memory one behind a switch that makes every write
 * throw (what a full disk or a read-only database does to SQLite's writes).
 */
import assert from 'node:assert/strict';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Logger, silentLogger, systemClock } from '../src/common/index.js';
import type { PluginManager } from '../src/plugin-manager/index.js';
import { createPluginNode, type PluginNode } from '../src/plugin-node/index.js';
import { createExamplePlugin, type ExamplePlugin } from '../src/registration/index.js';
import type { Registry } from '../src/registry/index.js';
import { createMemoryStorage } from '../src/storage/index.js';
import { type InstrumentedStorage, instrumented } from '../src/testing/harness/index.js';
import { createTempDir, RecordingHandler, waitFor } from '../src/testing/index.js';

const TYPE = 'example.com/berth-example';
const SLOTS = 4;
const TIMEOUTS = { dialMs: 1000, getInfoMs: 500, notifyMs: 500 };

type Op =
  | { op: 'create'; slot: number }
  | { op: 'delete'; slot: number }
  | { op: 'recreate'; slot: number }
  | { op: 'rename'; from: number; to: number }
  | { op: 'failValidate'; on: boolean }
  | { op: 'failRegister'; times: number }
  | { op: 'failStorage'; on: boolean }
  | { op: 'restart' }
  | { op: 'pause'; ms: number };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
function ops(withStorage: boolean): fc.Arbitrary<Op[]> {
  const choices: fc.Arbitrary<Op>[] = [
    slot.map((s) => ({ op: 'create' as const, slot: s })),
    slot.map((s) => ({ op: 'create' as const, slot: s })),
    slot.map((s) => ({ op: 'delete' as const, slot: s })),
    slot.map((s) => ({ op: 'recreate' as const, slot: s })),
    fc.record({ from: slot, to: slot }).map((r) => ({ op: 'rename' as const, ...r })),
    fc.boolean().map((on) => ({ op: 'failValidate' as const, on })),
    fc.integer({ min: 1, max: 3 }).map((times) => ({ op: 'failRegister' as const, times })),
    fc.constant({ op: 'restart' as const }),
    // Pauses let attempts run while a failure is switched on.
    fc.integer({ min: 0, max: 250 }).map((ms) => ({ op: 'pause' as const, ms })),
    fc.integer({ min: 0, max: 250 }).map((ms) => ({ op: 'pause' as const, ms })),
  ];
  if (withStorage) {
    // Weighted so that most sequences have writes failing while registrations run.
    const storage = fc.boolean().map((on) => ({ op: 'failStorage' as const, on }));
    choices.push(storage, storage, storage);
  }
  return fc.array(fc.oneof(...choices), { minLength: 1, maxLength: 14 });
}

/** Memory storage whose writes fail (nothing applied) while `failing` is set. */
function switchableStorage(): InstrumentedStorage & { failing: boolean } {
  const storage = instrumented(createMemoryStorage());
  return Object.defineProperty(storage, 'failing', {
    get: () => storage.failWrites !== undefined,
    set: (on: boolean) => {
      storage.failWrites = on ? 'injected: no space left on device' : undefined;
    },
  }) as InstrumentedStorage & { failing: boolean };
}

interface Live {
  plugin: ExamplePlugin;
  /** Where the socket file is now (a rename moves it; the server keeps serving). */
  path: string;
  /** Where it was bound: libuv unlinks this path when the server closes, whatever is there by then. */
  boundPath: string;
  name: string;
}

class World {
  readonly recorder = new RecordingHandler();
  readonly storage = switchableStorage();
  readonly slots: (Live | undefined)[] = Array.from({ length: SLOTS }, () => undefined);
  readonly notifyFalseViolations: string[] = [];
  /** Set while a (re)start restores state: the daemon is not ready then. */
  restoring = false;
  registry!: Registry;
  manager!: PluginManager;
  node!: PluginNode;
  #nextName = 0;
  readonly #pluginsDir: string;
  readonly #logger: Logger = silentLogger;

  constructor(pluginsDir: string) {
    this.#pluginsDir = pluginsDir;
  }

  slotPath(i: number): string {
    return join(this.#pluginsDir, `s${i}.sock`);
  }

  async start(): Promise<void> {
    this.restoring = true;
    const recorder = this.recorder;
    // The library facade (the daemon's own core): registry, bridge, plugin manager, restore settling.
    this.node = createPluginNode({
      pluginsDir: this.#pluginsDir,
      storage: this.storage,
      dispensers: {},
      clock: systemClock,
      logger: this.#logger,
      timeouts: TIMEOUTS,
      liveness: false,
      resyncPeriodMs: 200,
      rescanIntervalMs: 500,
      restoreSettleTimeoutMs: TIMEOUTS.dialMs + TIMEOUTS.getInfoMs + TIMEOUTS.notifyMs,
      handlers: {
        [TYPE]: (delegate) => ({
          async validatePlugin(name, endpoint, versions, context) {
            await recorder.validatePlugin(name, endpoint, versions, context);
            await delegate.validatePlugin(name, endpoint, versions, context);
          },
          async registerPlugin(name, endpoint, versions, context) {
            await recorder.registerPlugin(name, endpoint, versions, context);
            await delegate.registerPlugin(name, endpoint, versions, context);
          },
          async deRegisterPlugin(name, endpoint, context) {
            await delegate.deRegisterPlugin(name, endpoint, context);
            await recorder.deRegisterPlugin(name, endpoint, context);
          },
        }),
      },
    });
    this.registry = this.node.registry;
    this.manager = this.node.manager;
    await this.node.start();
    this.restoring = false;
  }

  async stop(): Promise<void> {
    await this.node.stop();
  }

  /** Starts a plugin server at a slot and watches every Notify(false) it receives. */
  async serve(i: number, name = `p${this.#nextName++}`): Promise<void> {
    const path = this.slotPath(i);
    const plugin = createExamplePlugin({ socketPath: path, name, type: TYPE, versions: ['v1beta1'] });
    await plugin.start();
    this.slots[i] = { plugin, path, boundPath: path, name };
    void (async () => {
      for (;;) {
        const status = await plugin.nextStatus(600_000).catch(() => undefined);
        if (status === undefined) return;
        if (status.pluginRegistered || this.restoring) continue;
        const current = this.slots.find((s) => s?.plugin === plugin);
        const listed = this.registry
          .listInstances(TYPE, name)
          .some((p) => p.connectionInfo?.socketPath === current?.path);
        if (listed)
          this.notifyFalseViolations.push(
            `${name} at ${current?.path} listed after Notify(false): ${status.error}`,
          );
      }
    })();
  }

  async unserve(i: number): Promise<Live | undefined> {
    const live = this.slots[i];
    if (!live) return undefined;
    this.slots[i] = undefined;
    await live.plugin.stop();
    rmSync(live.path, { force: true });
    // A server renamed away unlinks its old path on close: a newer socket there went with it
    // (the model follows the disk; berth sees the file gone and deregisters that plugin).
    if (live.boundPath !== live.path) {
      const j = this.slots.findIndex((other) => other?.path === live.boundPath);
      if (j !== -1) await this.unserve(j);
    }
    return live;
  }

  async apply(op: Op): Promise<void> {
    switch (op.op) {
      case 'create':
        if (!this.slots[op.slot]) await this.serve(op.slot);
        return;
      case 'delete':
        await this.unserve(op.slot);
        return;
      case 'recreate': {
        const gone = await this.unserve(op.slot);
        if (gone) await this.serve(op.slot, gone.name);
        return;
      }
      case 'rename': {
        const from = this.slots[op.from];
        if (!from || op.from === op.to || this.slots[op.to]) return;
        renameSync(from.path, this.slotPath(op.to));
        from.path = this.slotPath(op.to);
        this.slots[op.from] = undefined;
        this.slots[op.to] = from;
        return;
      }
      case 'failValidate':
        if (op.on) this.recorder.behaviour.failValidate = 'injected validate failure';
        else delete this.recorder.behaviour.failValidate;
        return;
      case 'failRegister':
        this.recorder.behaviour.failRegister = 'injected register failure';
        this.recorder.behaviour.failRegisterTimes = op.times;
        return;
      case 'failStorage':
        this.storage.failing = op.on;
        return;
      case 'restart':
        await this.stop();
        await this.start();
        return;
      case 'pause':
        await new Promise((resolve) => setTimeout(resolve, op.ms));
        return;
    }
  }

  /** Live sockets as name@path. */
  live(): string[] {
    return this.slots.flatMap((s) => (s ? [`${s.name}@${s.path}`] : [])).sort();
  }

  actual(): string[] {
    return this.manager
      .sockets()
      .filter((s) => s.state === 'registered' && s.plugin)
      .map((s) => `${s.plugin?.name}@${s.socketPath}`)
      .sort();
  }

  listed(): string[] {
    return (this.registry.listPlugins(TYPE) ?? [])
      .flatMap((p) => this.registry.listInstances(TYPE, p.name))
      .map((p) => `${p.name}@${p.connectionInfo?.socketPath}`)
      .sort();
  }

  async dispose(): Promise<void> {
    for (let i = 0; i < SLOTS; i += 1) await this.unserve(i);
    await this.stop();
  }
}

async function runSequence(sequence: Op[]): Promise<void> {
  await using dir = createTempDir('berth-prop-');
  const world = new World(dir.join('plugins'));
  await world.start();
  try {
    for (const op of sequence) await world.apply(op);
    // Failures end; everything must converge.
    delete world.recorder.behaviour.failValidate;
    delete world.recorder.behaviour.failRegister;
    world.storage.failing = false;
    await waitFor(
      'actual state == live sockets and registry == actual state',
      () => {
        const live = world.live();
        return (
          JSON.stringify(world.actual()) === JSON.stringify(live) &&
          JSON.stringify(world.listed()) === JSON.stringify(live)
        );
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}\nlive:   ${world.live().join(' ')}\nactual: ${world.actual().join(' ')}\nlisted: ${world.listed().join(' ')}`,
      );
    });
    assert.deepEqual(world.recorder.violations, [], 'handler call order');
    assert.deepEqual(world.notifyFalseViolations, [], 'registry listed a plugin told Notify(false)');
  } finally {
    await world.dispose();
  }
}

describe('registration properties', { concurrency: false }, () => {
  it('a registration whose storage write fails is not listed once the plugin is told Notify(false)', async () => {
    await runSequence([
      { op: 'failStorage', on: true },
      { op: 'create', slot: 0 },
      { op: 'pause', ms: 250 },
    ]);
  });

  it('socket churn, handler failures and restarts: ordered calls, no refused plugin listed, convergence', async () => {
    await fc.assert(fc.asyncProperty(ops(false), runSequence), { numRuns: 30, endOnFailure: true });
  });

  it('the same with storage write failures (a full disk, a read-only database)', async () => {
    await fc.assert(fc.asyncProperty(ops(true), runSequence), { numRuns: 30, endOnFailure: true });
  });
});
