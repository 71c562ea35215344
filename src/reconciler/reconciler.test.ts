import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { createActualStateOfWorld, createDesiredStateOfWorld } from '../cache/index.js';
import { silentLogger } from '../common/index.js';
import { createOperationExecutor } from '../executor/index.js';
import type { PluginHandler } from '../handlers/types.js';
import { createExamplePlugin, dialRegistration, type ExamplePlugin } from '../registration/index.js';
import { createTempDir, FakeClock, RecordingHandler, settle, waitFor } from '../testing/index.js';
import { createReconciler, type ReconcilerHandlers } from './reconciler.js';

/** The narrow handler-table surface the reconciler uses. */
class SmallHandlerTable implements ReconcilerHandlers {
  readonly #handlers = new Map<string, PluginHandler>();
  readonly #listeners = new Set<(type: string) => void>();
  add(type: string, handler: PluginHandler): void {
    this.#handlers.set(type, handler);
    for (const listener of this.#listeners) listener(type);
  }
  get(type: string): PluginHandler | undefined {
    return this.#handlers.get(type);
  }
  onAdded(listener: (type: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function setup(t: TestContext) {
  const dir = createTempDir();
  // Time never moves unless a test moves it: a one-hour resync never fires, so
  // every registration below proves the reconciler was woken, not polled.
  const clock = new FakeClock();
  const dsw = createDesiredStateOfWorld({ clock });
  const asw = createActualStateOfWorld();
  const executor = createOperationExecutor({ clock, logger: silentLogger, dial: dialRegistration });
  const handlers = new SmallHandlerTable();
  const reconciler = createReconciler({
    desiredState: dsw,
    actualState: asw,
    executor,
    handlers,
    clock,
    logger: silentLogger,
    resyncPeriodMs: 3_600_000,
  });
  t.after(async () => {
    await reconciler.stop();
    executor.stop();
    await executor.waitForCompletion();
    dir.remove();
  });
  const startPlugin = async (file: string, name = 'example-plugin', type = 'DevicePlugin') => {
    const plugin: ExamplePlugin = createExamplePlugin({
      socketPath: dir.join(file),
      name,
      type,
      versions: ['v1beta1', 'v1beta2'],
    });
    t.after(() => plugin.stop());
    await plugin.start();
    return plugin;
  };
  return { dir, clock, dsw, asw, executor, handlers, reconciler, startPlugin };
}

describe('reconciler (upstream reconciler_test)', () => {
  it('DoNothing: empty caches stay empty', async (t) => {
    const { dsw, asw, reconciler } = setup(t);
    reconciler.start();
    reconciler.reconcile();
    await settle();
    assert.deepEqual(dsw.getPluginsToRegister(), []);
    assert.deepEqual(asw.getRegisteredPlugins(), []);
  });

  it('Register: a desired plugin is registered with the desired uuid', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    const handler = new RecordingHandler();
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('plugin.sock');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    const uuid = dsw.get(plugin.socketPath)?.uuid;
    await waitFor('the plugin in the actual state', () => asw.get(plugin.socketPath)?.uuid === uuid);
    assert.equal(asw.getRegisteredPlugins().length, 1);
    assert.equal(asw.getRegisteredPlugins()[0]?.socketPath, plugin.socketPath);
    assert.deepEqual(handler.events, ['validate example-plugin', 'register example-plugin']);
  });

  it('RegisterThenUnregister: removing the desired plugin deregisters it', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    const handler = new RecordingHandler();
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('plugin.sock');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    await waitFor('registration', () => asw.pluginExists(plugin.socketPath));
    dsw.removePlugin(plugin.socketPath);
    await plugin.stop();
    await waitFor('deregistration', () => asw.getRegisteredPlugins().length === 0);
    await handler.waitForEvents((e) => e.includes('deregister example-plugin'));
    assert.deepEqual(handler.events, [
      'validate example-plugin',
      'register example-plugin',
      'deregister example-plugin',
    ]);
    assert.deepEqual(handler.violations, []);
  });

  it('ReRegister: a new generation of the same socket is unregistered and registered again', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    const handler = new RecordingHandler();
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('plugin2.sock');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    const first = dsw.get(plugin.socketPath)?.uuid;
    await waitFor('first registration', () => asw.get(plugin.socketPath)?.uuid === first);
    dsw.addOrUpdatePlugin(plugin.socketPath);
    const second = dsw.get(plugin.socketPath)?.uuid;
    assert.notEqual(first, second);
    await waitFor('re-registration', () => asw.get(plugin.socketPath)?.uuid === second);
    assert.equal(asw.getRegisteredPlugins().length, 1);
    await handler.waitForEvents((e) => e.length === 5);
    assert.deepEqual(handler.events, [
      'validate example-plugin',
      'register example-plugin',
      'deregister example-plugin',
      'validate example-plugin',
      'register example-plugin',
    ]);
    assert.deepEqual(handler.violations, []);
  });
});

describe('reconciler wake-ups (berth: event-driven, not a 1 s loop)', () => {
  it('a plugin refused for lack of a handler registers as soon as the handler is added', async (t) => {
    const { dsw, asw, executor, handlers, reconciler, startPlugin } = setup(t);
    reconciler.start();
    const plugin = await startPlugin('foo.sock', 'foo', 'FooPlugin');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    await waitFor(
      'the no-handler failure',
      () => executor.status(plugin.socketPath)?.lastError?.code === 'BERTH_NO_HANDLER',
    );
    assert.match((await plugin.nextStatus()).error, /no handler registered for plugin type: FooPlugin/);
    const handler = new RecordingHandler();
    handlers.add('FooPlugin', handler);
    // The FakeClock is never advanced: the backoff window could not have ended by itself.
    await waitFor('registration after addHandler', () => asw.pluginExists(plugin.socketPath));
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    assert.deepEqual(handler.events, ['validate foo', 'register foo']);
  });

  it('a failed register is retried when its backoff window ends (a clock timer, not the resync)', async (t) => {
    const { clock, dsw, asw, executor, handlers, reconciler, startPlugin } = setup(t);
    const handler = new RecordingHandler({ failRegister: 'transient', failRegisterTimes: 1 });
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('p.sock', 'p');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    await waitFor(
      'the first failure',
      () => executor.status(plugin.socketPath)?.lastError?.code === 'BERTH_REGISTER_FAILED',
    );
    assert.equal(asw.pluginExists(plugin.socketPath), false);
    const retryAt = executor.status(plugin.socketPath)?.retryAt ?? 0;
    await clock.set(retryAt + 1);
    await waitFor('the retry to register', () => asw.pluginExists(plugin.socketPath));
    assert.deepEqual(handler.events, ['validate p', 'register p', 'validate p', 'register p']);
    assert.deepEqual(handler.violations, []);
  });

  it('a register refused because the unregister still runs is retried when that unregister settles', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    let release!: () => void;
    const handler = new RecordingHandler();
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('p.sock', 'p');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    await waitFor('registration', () => asw.pluginExists(plugin.socketPath));
    handler.behaviour.holdDeregister = new Promise<void>((r) => (release = r));
    dsw.addOrUpdatePlugin(plugin.socketPath);
    const second = dsw.get(plugin.socketPath)?.uuid;
    await handler.waitForEvents((e) => e.includes('deregister p'));
    await waitFor('the refused register to be recorded', () => {
      const refusal = reconciler.refusals().get(plugin.socketPath);
      return refusal?.operation === 'register' && refusal.code === 'BERTH_OPERATION_PENDING';
    });
    release();
    await waitFor(
      're-registration right after the unregister',
      () => asw.get(plugin.socketPath)?.uuid === second,
    );
    assert.equal(reconciler.refusals().has(plugin.socketPath), false);
    assert.deepEqual(handler.violations, []);
  });

  it('a register refused as pending while the attempt ran leaves no refusal once the plugin is registered', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    let release!: () => void;
    const handler = new RecordingHandler({ holdValidate: new Promise<void>((r) => (release = r)) });
    handlers.add('DevicePlugin', handler);
    reconciler.start();
    const plugin = await startPlugin('p.sock', 'p');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    await handler.waitForEvents((e) => e.includes('validate p'));
    // A full pass while the attempt is mid-handshake: the path is not registered yet, so it is
    // asked again and refused as pending.
    reconciler.wake();
    await waitFor(
      'the pending refusal recorded',
      () => reconciler.refusals().get(plugin.socketPath)?.code === 'BERTH_OPERATION_PENDING',
    );
    release();
    await waitFor('registration', () => asw.pluginExists(plugin.socketPath));
    // The settle touches the path: registered as wanted, so no refusal applies to it any more.
    await waitFor('the stale refusal dropped', () => !reconciler.refusals().has(plugin.socketPath));
    assert.deepEqual(handler.violations, []);
  });

  it('the periodic resync still runs a pass', async (t) => {
    const { clock, reconciler } = setup(t);
    let passes = 0;
    const original = reconciler.reconcile.bind(reconciler);
    reconciler.reconcile = () => {
      passes++;
      original();
    };
    reconciler.start();
    const before = passes;
    await clock.advance(3_600_000);
    assert.equal(passes, before + 1);
  });

  it('stop() is idempotent and ends all wake-ups', async (t) => {
    const { dsw, asw, handlers, reconciler, startPlugin } = setup(t);
    handlers.add('DevicePlugin', new RecordingHandler());
    reconciler.start();
    await reconciler.stop();
    await reconciler.stop();
    const plugin = await startPlugin('p.sock');
    dsw.addOrUpdatePlugin(plugin.socketPath);
    reconciler.wake();
    await settle();
    await settle();
    assert.equal(asw.pluginExists(plugin.socketPath), false);
    assert.equal(plugin.getInfoCalls, 0);
  });

  it('rejects a non-positive resync period', () => {
    assert.throws(
      () =>
        createReconciler({
          desiredState: createDesiredStateOfWorld(),
          actualState: createActualStateOfWorld(),
          executor: createOperationExecutor({
            clock: new FakeClock(),
            logger: silentLogger,
            dial: dialRegistration,
          }),
          handlers: new SmallHandlerTable(),
          clock: new FakeClock(),
          logger: silentLogger,
          resyncPeriodMs: 0,
        }),
      /resyncPeriodMs must be a positive number/,
    );
  });
});
