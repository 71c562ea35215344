import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { createActualStateOfWorld } from '../cache/index.js';
import type { PluginInfo } from '../cache/types.js';
import { isBerthError, silentLogger } from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import {
  createExamplePlugin,
  dialRegistration,
  type ExamplePlugin,
  type RegistrationServerBehaviour,
} from '../registration/index.js';
import {
  createStaleSocket,
  createTempDir,
  FakeClock,
  RecordingHandler,
  type TempDir,
  waitFor,
} from '../testing/index.js';
import { createOperationExecutor } from './operation-executor.js';
import type {
  ExecutorTimeouts,
  OperationEvent,
  OperationExecutor,
  OperationExecutorOptions,
} from './types.js';

const VERSIONS = ['v1beta1', 'v1beta2'];

interface Setup {
  dir: TempDir;
  clock: FakeClock;
  executor: OperationExecutor;
  asw: ReturnType<typeof createActualStateOfWorld>;
  events: OperationEvent[];
  nextEvent(socketPath: string): Promise<OperationEvent>;
}

function setup(t: TestContext, timeouts: Partial<ExecutorTimeouts> = {}): Setup {
  const dir = createTempDir();
  const clock = new FakeClock();
  const events: OperationEvent[] = [];
  const executor = createOperationExecutor({
    clock,
    logger: silentLogger,
    dial: dialRegistration,
    timeouts,
    onEvent: (e) => events.push(e),
  });
  t.after(async () => {
    executor.stop();
    await executor.waitForCompletion();
    dir.remove();
  });
  const nextEvent = (socketPath: string) =>
    new Promise<OperationEvent>((resolve) => {
      const off = executor.addListener((e) => {
        if (e.socketPath !== socketPath) return;
        off();
        resolve(e);
      });
    });
  return { dir, clock, executor, asw: createActualStateOfWorld(), events, nextEvent };
}

async function startPlugin(
  t: TestContext,
  socketPath: string,
  options: { name?: string; type?: string; endpoint?: string; behaviour?: RegistrationServerBehaviour } = {},
): Promise<ExamplePlugin> {
  const plugin = createExamplePlugin({
    socketPath,
    name: options.name ?? 'example-plugin',
    type: options.type ?? 'DevicePlugin',
    endpoint: options.endpoint ?? '',
    versions: VERSIONS,
    ...(options.behaviour ? { behaviour: options.behaviour } : {}),
  });
  t.after(() => plugin.stop());
  await plugin.start();
  return plugin;
}

function generation(uuid: string) {
  return { uuid, timestamp: 1, foundInDeprecatedDir: false };
}

function handlersOf(table: Record<string, PluginHandler>) {
  return (type: string) => table[type];
}

/** A listener that accepts connections but never speaks HTTP/2: the dial waits. */
async function silentListener(t: TestContext, path: string): Promise<{ connections: Socket[] }> {
  const connections: Socket[] = [];
  const server: Server = createServer((socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(async () => {
    for (const c of connections) c.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { connections };
}

/** An executor on a fake clock, without young-socket retries (a refusal fails the attempt at once). */
function onFakeClock(t: TestContext, options: Partial<OperationExecutorOptions>) {
  const dir = createTempDir();
  const clock = new FakeClock();
  const executor = createOperationExecutor({
    clock,
    logger: silentLogger,
    dial: dialRegistration,
    youngSocketRetry: false,
    ...options,
  });
  t.after(async () => {
    await executor.stop();
    dir.remove();
  });
  return { dir, clock, executor, asw: createActualStateOfWorld() };
}

/** Waits until `n` attempts on `path` have settled and none is running; resolves with its status. */
function attemptsSettled(executor: OperationExecutor, path: string, n: number) {
  return waitFor(`${n} attempts on ${path} settled`, () => {
    const status = executor.status(path);
    return !executor.isPending(path) && (status?.attempts ?? 0) >= n ? status : undefined;
  });
}

function refusal(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('operation executor: one operation per socket path (upstream operation_executor_test)', () => {
  it('register on two different paths runs both at once; twice on one path is refused', async (t) => {
    const { dir, executor, asw } = setup(t);
    const a = await silentListener(t, dir.join('a.sock'));
    const b = await silentListener(t, dir.join('b.sock'));
    const none = handlersOf({});
    executor.registerPlugin(dir.join('a.sock'), generation('a1'), none, asw);
    executor.registerPlugin(dir.join('b.sock'), generation('b1'), none, asw);
    await waitFor(
      'both register operations to connect',
      () => a.connections.length > 0 && b.connections.length > 0,
    );
    assert.ok(executor.isPending(dir.join('a.sock')) && executor.isPending(dir.join('b.sock')));

    const second = refusal(() => executor.registerPlugin(dir.join('a.sock'), generation('a2'), none, asw));
    assert.ok(isBerthError(second, 'BERTH_OPERATION_PENDING'), String(second));
    assert.equal(
      second.message,
      `Failed to create operation with name "${dir.join('a.sock')}". An operation with that name is already executing.`,
    );
    // Register and unregister share the key: an unregister for a busy path is refused too.
    const info: PluginInfo = {
      socketPath: dir.join('a.sock'),
      timestamp: 0,
      uuid: 'old',
      foundInDeprecatedDir: false,
    };
    assert.ok(
      isBerthError(
        refusal(() => executor.unregisterPlugin(info, asw)),
        'BERTH_OPERATION_PENDING',
      ),
    );
  });

  it('unregister on two different paths runs both at once; twice on one path is refused', async (t) => {
    const { executor, asw } = setup(t);
    let release!: () => void;
    const handler = new RecordingHandler({ holdDeregister: new Promise<void>((r) => (release = r)) });
    const plugin = (path: string, name: string): PluginInfo => ({
      socketPath: path,
      timestamp: 0,
      uuid: `${name}-uuid`,
      foundInDeprecatedDir: false,
      handler,
      type: 'DevicePlugin',
      name,
      endpoint: path,
    });
    executor.unregisterPlugin(plugin('/x/a.sock', 'a'), asw);
    executor.unregisterPlugin(plugin('/x/b.sock', 'b'), asw);
    await handler.waitForEvents((e) => e.includes('deregister a') && e.includes('deregister b'));
    assert.ok(
      isBerthError(
        refusal(() => executor.unregisterPlugin(plugin('/x/a.sock', 'a'), asw)),
        'BERTH_OPERATION_PENDING',
      ),
    );
    release();
    await executor.wait();
    assert.deepEqual(handler.events, ['deregister a', 'deregister b']);
  });
});

describe('register operation against a real plugin', () => {
  it('validates, registers, adds the actual state and notifies true, in that order', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t);
    const path = dir.join('plugin.sock');
    const plugin = await startPlugin(t, path, { name: 'example-plugin', endpoint: '/run/example.sock' });
    const handler = new RecordingHandler();
    let aswAtRegister: boolean | undefined;
    const wrapped: PluginHandler = {
      validatePlugin: (...args) => handler.validatePlugin(...args),
      registerPlugin: async (...args) => {
        aswAtRegister = asw.pluginExists(path);
        assert.equal(plugin.statuses.length, 0, 'no Notify before the handler registered the plugin');
        await handler.registerPlugin(...args);
      },
      deRegisterPlugin: (...args) => handler.deRegisterPlugin(...args),
    };
    const done = nextEvent(path);
    executor.registerPlugin(path, generation('g1'), handlersOf({ DevicePlugin: wrapped }), asw);
    const event = await done;
    assert.equal(event.type, 'register-succeeded', JSON.stringify(event));
    assert.deepEqual(handler.events, ['validate example-plugin', 'register example-plugin']);
    assert.equal(aswAtRegister, true, 'the actual state holds the plugin before the handler registers it');
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    assert.equal(plugin.statuses.length, 1);
    const entry = asw.get(path);
    assert.equal(entry?.uuid, 'g1');
    assert.equal(entry?.name, 'example-plugin');
    assert.equal(entry?.type, 'DevicePlugin');
    assert.equal(entry?.endpoint, '/run/example.sock');
    assert.deepEqual(entry?.supportedVersions, VERSIONS);
    assert.equal(entry?.handler, wrapped);
    assert.deepEqual(handler.calls[1]?.context, {
      type: 'DevicePlugin',
      socketPath: path,
      foundInDeprecatedDir: false,
    });
    assert.equal(executor.status(path), undefined, 'success leaves no backoff behind');
  });

  it('an empty endpoint reaches the handler as the socket path', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    await startPlugin(t, path, { endpoint: '' });
    const handler = new RecordingHandler();
    const done = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({ DevicePlugin: handler }), asw);
    assert.equal((await done).type, 'register-succeeded');
    assert.deepEqual(
      handler.calls.map((c) => c.endpoint),
      [path, path],
    );
    assert.equal(asw.get(path)?.endpoint, path);
  });

  it('an unknown type is refused with Notify(false) and backoff; once a handler exists a reset retries at once', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    const plugin = await startPlugin(t, path, { type: 'FooPlugin', name: 'foo' });
    const table: Record<string, PluginHandler> = {};
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf(table), asw);
    const event = await failed;
    assert.equal(event.type, 'register-failed');
    assert.ok(event.type === 'register-failed');
    const text = `RegisterPlugin error -- no handler registered for plugin type: FooPlugin at socket ${path}`;
    assert.equal(event.error.code, 'BERTH_NO_HANDLER');
    assert.equal(event.error.message, text);
    assert.deepEqual(event.plugin, { type: 'FooPlugin', name: 'foo' });
    assert.equal(event.attempts, 1);
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: false, error: text });
    assert.equal(asw.pluginExists(path), false);
    assert.ok(
      isBerthError(
        refusal(() => executor.registerPlugin(path, generation('g'), handlersOf(table), asw)),
        'BERTH_OPERATION_BACKOFF',
      ),
    );

    const handler = new RecordingHandler();
    table.FooPlugin = handler;
    assert.equal(executor.resetBackoff(path), true);
    const ok = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf(table), asw);
    assert.equal((await ok).type, 'register-succeeded');
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    assert.deepEqual(handler.events, ['validate foo', 'register foo']);
  });

  it('a validation error notifies false, leaves the actual state untouched and backs off', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    const plugin = await startPlugin(t, path, { name: 'v' });
    let aswWrites = 0;
    const countingAsw = {
      ...asw,
      addPlugin: (info: PluginInfo) => {
        aswWrites++;
        asw.addPlugin(info);
      },
    };
    const handler = new RecordingHandler({ failValidate: 'unsupported versions [v1beta1 v1beta2]' });
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({ DevicePlugin: handler }), countingAsw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_VALIDATION_FAILED');
    assert.equal(event.error.message, 'RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed');
    assert.deepEqual(await plugin.nextStatus(), {
      pluginRegistered: false,
      error:
        'RegisterPlugin error -- plugin validation failed with err: unsupported versions [v1beta1 v1beta2]',
    });
    assert.equal(aswWrites, 0);
    assert.equal(asw.pluginExists(path), false);
    assert.deepEqual(handler.events, ['validate v']);
    assert.equal(executor.status(path)?.lastError?.code, 'BERTH_VALIDATION_FAILED');
  });

  it('a register error notifies false, removes the plugin from the actual state and is retried (kubernetes#133725)', async (t) => {
    const { dir, clock, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    const plugin = await startPlugin(t, path, { name: 'r' });
    const handler = new RecordingHandler({ failRegister: 'api server unreachable', failRegisterTimes: 1 });
    const handlers = handlersOf({ DevicePlugin: handler });
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlers, asw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_REGISTER_FAILED');
    const text = 'RegisterPlugin error -- plugin registration failed with err: api server unreachable';
    assert.equal(event.error.message, text);
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: false, error: text });
    assert.equal(asw.pluginExists(path), false, 'not left half-registered');
    assert.equal(event.retryAt, clock.now() + 500);

    assert.ok(isBerthError(refusal(() => executor.registerPlugin(path, generation('g'), handlers, asw))));
    await clock.advance(501);
    const ok = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlers, asw);
    assert.equal((await ok).type, 'register-succeeded');
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    assert.equal(asw.get(path)?.name, 'r');
    assert.deepEqual(handler.events, ['validate r', 'register r', 'validate r', 'register r']);
    assert.deepEqual(handler.violations, []);
  });

  it('a failed final Notify(true) undoes the registration (actual state and handler) and is retried', async (t) => {
    const { dir, clock, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    const plugin = await startPlugin(t, path, { name: 'n', behaviour: { failNotify: true } });
    const handler = new RecordingHandler();
    const handlers = handlersOf({ DevicePlugin: handler });
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlers, asw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_NOTIFY_FAILED');
    assert.match(
      event.error.message,
      new RegExp(`^RegisterPlugin error -- failed to send registration status at socket ${path}, err: `),
    );
    assert.deepEqual(plugin.statuses, [{ pluginRegistered: true, error: '' }]);
    assert.equal(asw.pluginExists(path), false);
    assert.deepEqual(handler.events, ['validate n', 'register n', 'deregister n']);
    assert.deepEqual(handler.calls[2]?.endpoint, path);

    plugin.behaviour.failNotify = false;
    await clock.advance(501);
    const ok = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlers, asw);
    assert.equal((await ok).type, 'register-succeeded');
    assert.equal(asw.get(path)?.name, 'n');
    assert.deepEqual(handler.violations, []);
  });

  it('when Notify(false) itself fails the upstream "failed to send error" text is reported', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t);
    const path = dir.join('p.sock');
    await startPlugin(t, path, { type: 'Nope', behaviour: { failNotify: true } });
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({}), asw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_NO_HANDLER');
    assert.ok(
      event.error.message.startsWith(
        `RegisterPlugin error -- failed to send error at socket ${path}, err: RegisterPlugin error -- no handler registered for plugin type: Nope at socket ${path}: `,
      ),
      event.error.message,
    );
  });

  it('a hanging GetInfo fails at its deadline without any Notify', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t, { getInfoMs: 200 });
    const path = dir.join('p.sock');
    const plugin = await startPlugin(t, path, { behaviour: { hangGetInfo: true } });
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({ DevicePlugin: new RecordingHandler() }), asw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_GET_INFO_FAILED');
    assert.match(
      event.error.message,
      new RegExp(
        `^RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${path}, err: `,
      ),
    );
    assert.equal(plugin.getInfoCalls, 1);
    assert.deepEqual(plugin.statuses, []);
    assert.equal(event.plugin, undefined);
  });

  it('a stale socket (no listener) fails at the dial at once, not after the dial timeout', async (t) => {
    // A 10-minute dial timeout: if the dial waited for it, the test runner's timeout would fail this test.
    const { dir, executor, asw, nextEvent } = setup(t, { dialMs: 600_000 });
    const path = dir.join('stale.sock');
    await createStaleSocket(path);
    const failed = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({}), asw);
    const event = await failed;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_DIAL_FAILED');
    assert.match(
      event.error.message,
      new RegExp(`^RegisterPlugin error -- dial failed at socket ${path}, err: `),
    );
    assert.match(event.error.message, /ECONNREFUSED/);
  });

  it('a socket that refused its last attempt is probed before the next dial: a refusal costs no dial, a listener gets one', async (t) => {
    let dials = 0;
    // The default backoff (the map remembers the last failure), on a fake clock this test advances.
    const { dir, clock, executor, asw } = onFakeClock(t, {
      dial: (socketPath, options) => {
        dials += 1;
        return dialRegistration(socketPath, options);
      },
    });
    const path = dir.join('later.sock');
    await createStaleSocket(path);
    const settled = (n: number) => attemptsSettled(executor, path, n);
    const handlers = handlersOf({ DevicePlugin: new RecordingHandler() });
    executor.registerPlugin(path, generation('g'), handlers, asw);
    await settled(1);
    assert.equal(dials, 1);
    await clock.advance(60_000); // past the backoff
    executor.registerPlugin(path, generation('g'), handlers, asw);
    const second = await settled(2);
    assert.equal(second.lastError?.code, 'BERTH_DIAL_FAILED');
    assert.match(second.lastError?.message ?? '', /connection refused \(ECONNREFUSED\)/);
    assert.equal(dials, 1, 'the refused retry was answered by the probe, without a dial');
    // The same generation's file, now with a listener behind it (a server that listened late).
    rmSync(path);
    await startPlugin(t, path);
    await clock.advance(60_000);
    executor.registerPlugin(path, generation('g'), handlers, asw);
    await waitFor('registered', () => asw.pluginExists(path));
    assert.equal(dials, 2);
  });

  it('a stale file that still refuses its retry fails it without waiting for a handshake slot', async (t) => {
    // One handshake slot, held for as long as this test lasts by a plugin that never speaks HTTP/2.
    const { dir, clock, executor, asw } = onFakeClock(t, {
      timeouts: { dialMs: 600_000 },
      maxConcurrentRegistrations: 1,
      slotBudgets: { handshakeMs: 600_000 },
    });
    const stale = dir.join('stale.sock');
    await createStaleSocket(stale);
    const attempts = (n: number) => attemptsSettled(executor, stale, n);
    executor.registerPlugin(stale, generation('g'), handlersOf({}), asw);
    await attempts(1);

    const silent = dir.join('silent.sock');
    const listener = await silentListener(t, silent);
    executor.registerPlugin(silent, generation('s'), handlersOf({}), asw);
    await waitFor('the silent plugin to hold the slot', () => listener.connections.length > 0);
    assert.equal(executor.laneUsage().main.held, 1);

    await clock.advance(60_000); // past the stale file's backoff (not the silent dial's budget)
    executor.registerPlugin(stale, generation('g'), handlersOf({}), asw);
    const second = await attempts(2);
    assert.equal(second.lastError?.code, 'BERTH_DIAL_FAILED');
    assert.match(
      second.lastError?.message ?? '',
      /^RegisterPlugin error -- dial failed at socket .*ECONNREFUSED/,
    );
    assert.deepEqual(executor.laneUsage().main, { held: 1, waiting: 0 }, 'the silent plugin kept its slot');
    assert.ok(executor.isPending(silent));
  });

  it('stop() aborts a register operation that is waiting on its dial', async (t) => {
    const { dir, executor, asw, nextEvent } = setup(t, { dialMs: 600_000 });
    const path = dir.join('silent.sock');
    const listener = await silentListener(t, path);
    const settled = nextEvent(path);
    executor.registerPlugin(path, generation('g'), handlersOf({}), asw);
    await waitFor('the dial to connect', () => listener.connections.length > 0);
    executor.stop();
    executor.stop();
    const event = await settled;
    assert.ok(event.type === 'register-failed');
    assert.equal(event.error.code, 'BERTH_SHUT_DOWN');
    assert.ok(isBerthError(event.error.cause, 'BERTH_DIAL_FAILED'), String(event.error.cause));
  });
});

describe('unregister operation', () => {
  it('removes the actual state FIRST, then tells the handler which instance (name and endpoint) is going', async (t) => {
    const { executor, asw, nextEvent } = setup(t);
    const seen: Array<{ name: string; endpoint: string; stillInAsw: boolean }> = [];
    const handler: PluginHandler = {
      validatePlugin() {},
      registerPlugin() {},
      deRegisterPlugin(name, endpoint, context) {
        seen.push({ name, endpoint, stillInAsw: asw.pluginExists(context.socketPath) });
      },
    };
    const info: PluginInfo = {
      socketPath: '/x/p.sock',
      timestamp: 1,
      uuid: 'u',
      foundInDeprecatedDir: false,
      handler,
      type: 'DevicePlugin',
      name: 'p',
      endpoint: '/x/service.sock',
    };
    asw.addPlugin(info);
    const done = nextEvent('/x/p.sock');
    executor.unregisterPlugin(info, asw);
    assert.equal((await done).type, 'unregister-succeeded');
    assert.deepEqual(seen, [{ name: 'p', endpoint: '/x/service.sock', stillInAsw: false }]);
    assert.equal(asw.pluginExists('/x/p.sock'), false);
  });

  it('without a handler it fails with the upstream text, keeps the entry and backs off', async (t) => {
    const { executor, asw, nextEvent } = setup(t);
    const info: PluginInfo = {
      socketPath: '/x/p.sock',
      timestamp: 1,
      uuid: 'u',
      foundInDeprecatedDir: false,
    };
    asw.addPlugin(info);
    const done = nextEvent('/x/p.sock');
    executor.unregisterPlugin(info, asw);
    const event = await done;
    assert.ok(event.type === 'unregister-failed');
    assert.equal(event.error.code, 'BERTH_HANDLER_MISSING');
    assert.equal(event.error.message, 'UnregisterPlugin error -- failed to get plugin handler for /x/p.sock');
    assert.equal(asw.pluginExists('/x/p.sock'), true);
    assert.ok(
      isBerthError(
        refusal(() => executor.unregisterPlugin(info, asw)),
        'BERTH_OPERATION_BACKOFF',
      ),
    );
  });
});

describe('operation executor options', () => {
  it('rejects a non-positive timeout with a clear error', () => {
    assert.throws(
      () =>
        createOperationExecutor({
          clock: new FakeClock(),
          logger: silentLogger,
          dial: dialRegistration,
          timeouts: { getInfoMs: 0 },
        }),
      /timeouts\.getInfoMs must be a positive number/,
    );
  });
});
