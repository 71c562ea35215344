/**
 * End to end through createPluginManager: a real directory, real unix
 * sockets, real gRPC plugins (in process and as child processes). FakeClock
 * wherever backoff or liveness timing matters; waitFor everywhere else.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import type { PluginEvent } from '../src/common/index.js';
import {
  createPluginManager,
  type DeregistrationReason,
  type PluginManager,
  type PluginManagerOptions,
  type RegisteredPlugin,
  type SocketStatus,
} from '../src/plugin-manager/index.js';
import {
  createExamplePlugin,
  type ExamplePlugin,
  type RegistrationServerBehaviour,
} from '../src/registration/index.js';
import { siblingModule, spawnModule, stopChild } from '../src/testing/harness/index.js';
import {
  createExampleHandler,
  createStaleSocket,
  createTempDir,
  FakeClock,
  newTestExamplePlugin,
  RecordingHandler,
  type TempDir,
  waitFor,
} from '../src/testing/index.js';

const VERSIONS = ['v1beta1', 'v1beta2'];

interface Harness {
  dir: TempDir;
  pluginsDir: string;
  manager: PluginManager;
  events: PluginEvent[];
  registered: RegisteredPlugin[];
  deregistered: Array<{ plugin: RegisteredPlugin; reason: DeregistrationReason }>;
  socket(path: string): SocketStatus | undefined;
  startPlugin(
    path: string,
    options?: { name?: string; type?: string; behaviour?: RegistrationServerBehaviour },
  ): Promise<ExamplePlugin>;
}

async function startManager(
  t: TestContext,
  options: Partial<PluginManagerOptions> = {},
  start = true,
): Promise<Harness> {
  const dir = createTempDir();
  const pluginsDir = dir.join('plugins');
  const events: PluginEvent[] = [];
  const registered: RegisteredPlugin[] = [];
  const deregistered: Harness['deregistered'] = [];
  const manager = createPluginManager({
    pluginsDir,
    liveness: false,
    onEvent: (e) => {
      if (e.type === 'plugin-registered') registered.push(e.plugin);
      else if (e.type === 'plugin-deregistered') deregistered.push({ plugin: e.plugin, reason: e.reason });
      else events.push(e);
    },
    ...options,
  });
  t.after(async () => {
    await manager.stop();
    dir.remove();
  });
  if (start) await manager.start();
  const startPlugin: Harness['startPlugin'] = async (path, pluginOptions = {}) => {
    const plugin = createExamplePlugin({
      socketPath: path,
      name: pluginOptions.name ?? 'example-plugin',
      type: pluginOptions.type ?? 'DevicePlugin',
      versions: VERSIONS,
      ...(pluginOptions.behaviour ? { behaviour: pluginOptions.behaviour } : {}),
    });
    t.after(() => plugin.stop());
    await plugin.start();
    return plugin;
  };
  const socket = (path: string) => manager.sockets().find((s) => s.socketPath === path);
  return { dir, pluginsDir, manager, events, registered, deregistered, socket, startPlugin };
}

describe('plugin manager end to end (upstream plugin_manager_test)', () => {
  it('registers plugins in subdirectories created at run time, depth 0, 1 and 2', async (t) => {
    const { pluginsDir, manager, events, registered } = await startManager(t);
    const handler = createExampleHandler({ supportedVersions: VERSIONS });
    manager.addHandler('DevicePlugin', handler);
    for (let depth = 0; depth < 3; depth++) {
      handler.resetEvents();
      const nested = join(pluginsDir, ...Array.from({ length: depth }, (_, i) => String(i)));
      await mkdir(nested, { recursive: true });
      const name = `example-plugin-${depth}`;
      const plugin = newTestExamplePlugin(
        name,
        'DevicePlugin',
        join(nested, `plugin-${depth}.sock`),
        ...VERSIONS,
      );
      t.after(() => plugin.stop());
      await plugin.start();
      assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
      await waitFor(`${name} registered`, () => manager.actualState.pluginExists(plugin.socketPath));
      assert.deepEqual(handler.events, [`validate ${name}`, `register ${name}`]);
      assert.ok(events.some((e) => e.type === 'discovered' && e.socketPath === plugin.socketPath));
      await waitFor('the onRegistered callback', () => registered.some((p) => p.name === name));
    }
    assert.equal(manager.liveSocketPaths().size, 3);
  });
});

describe('plugin manager: where berth is better than the kubelet', () => {
  it('registers on the change itself: no resync, no rescan, time standing still', async (t) => {
    // The clock never moves, the resync period is an hour and rescans are off:
    // only the watch event and the reconciler's wake-up can register this plugin.
    const { pluginsDir, manager, startPlugin, socket } = await startManager(t, {
      clock: new FakeClock(),
      resyncPeriodMs: 3_600_000,
      rescanIntervalMs: 0,
    });
    const handler = new RecordingHandler();
    manager.addHandler('DevicePlugin', handler);
    const plugin = await startPlugin(join(pluginsDir, 'fast.sock'), { name: 'fast' });
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor('registered state', () => socket(plugin.socketPath)?.state === 'registered');
    const status = socket(plugin.socketPath);
    assert.deepEqual(status?.plugin, { type: 'DevicePlugin', name: 'fast' });
    assert.equal(status?.endpoint, plugin.socketPath);
    assert.deepEqual(status?.versions, VERSIONS);
    assert.equal(typeof status?.registeredAt, 'number');
    assert.deepEqual(handler.events, ['validate fast', 'register fast']);
  });

  it('a stale socket fails fast and does not delay a live plugin that binds the same path', async (t) => {
    // FakeClock: the stale socket's backoff window would never end by itself.
    const clock = new FakeClock();
    const { pluginsDir, manager, events, startPlugin, socket } = await startManager(t, {
      clock,
      timeouts: { dialMs: 600_000 },
    });
    manager.addHandler('DevicePlugin', new RecordingHandler());
    const path = join(pluginsDir, 'plugin.sock');
    await staleSocketAt(path);
    const stale = await waitFor('the stale socket in backoff', () => {
      const s = socket(path);
      return s?.state === 'backoff' ? s : undefined;
    });
    assert.equal(stale.lastError?.code, 'BERTH_DIAL_FAILED');
    assert.match(stale.lastError?.message ?? '', /^RegisterPlugin error -- dial failed at socket /);
    assert.equal(stale.retryAt, clock.now() + 500);
    assert.equal(stale.attempts, 1);
    const failed = events.find((e) => e.type === 'failed' && e.socketPath === path);
    assert.ok(failed?.type === 'failed');
    assert.equal(failed.error.code, 'BERTH_DIAL_FAILED');
    assert.equal(failed.retryAt, clock.now() + 500);
    assert.equal(failed.attempts, 1);

    const plugin = await startPlugin(path, { name: 'live' });
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor('the live plugin registered', () => socket(path)?.state === 'registered');
    assert.equal(socket(path)?.lastError, undefined);
    assert.equal(manager.actualState.get(path)?.name, 'live');
  });

  it('a plugin whose handler register fails is not left half-registered: it is retried and registers', async (t) => {
    const clock = new FakeClock();
    const { pluginsDir, manager, startPlugin, socket } = await startManager(t, { clock });
    const handler = new RecordingHandler({ failRegister: 'device manager not ready', failRegisterTimes: 1 });
    manager.addHandler('DevicePlugin', handler);
    const plugin = await startPlugin(join(pluginsDir, 'p.sock'), { name: 'p' });
    assert.deepEqual(await plugin.nextStatus(), {
      pluginRegistered: false,
      error: 'RegisterPlugin error -- plugin registration failed with err: device manager not ready',
    });
    const backoff = await waitFor('backoff after the failed register', () => {
      const s = socket(plugin.socketPath);
      return s?.state === 'backoff' ? s : undefined;
    });
    assert.equal(backoff.lastError?.code, 'BERTH_REGISTER_FAILED');
    assert.deepEqual(backoff.plugin, { type: 'DevicePlugin', name: 'p' });
    assert.equal(manager.actualState.pluginExists(plugin.socketPath), false);

    await clock.advance(501);
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor('registered after the retry', () => socket(plugin.socketPath)?.state === 'registered');
    assert.equal(socket(plugin.socketPath)?.attempts, 2);
    assert.deepEqual(handler.events, ['validate p', 'register p', 'validate p', 'register p']);
    assert.deepEqual(handler.violations, []);
  });

  it('keeps validate -> register -> deregister in order per name while one socket is re-created rapidly', async (t) => {
    const { pluginsDir, manager } = await startManager(t);
    // Slow handler calls widen the windows in which a wrong order could slip in.
    const handler = new RecordingHandler({ delayMs: 3 });
    manager.addHandler('DevicePlugin', handler);
    const path = join(pluginsDir, 'churn.sock');
    let previous: ExamplePlugin | undefined;
    const generations = 12;
    for (let i = 0; i < generations; i++) {
      const plugin = createExamplePlugin({
        socketPath: path,
        name: 'churn',
        type: 'DevicePlugin',
        versions: VERSIONS,
      });
      t.after(() => plugin.stop());
      // Closing a unix-socket server unlinks its path (libuv), so the old one goes first.
      await previous?.stop();
      const before = handler.events.length;
      await plugin.start(); // a new socket file: a new generation
      previous = plugin;
      // Re-create again as soon as the manager is busy with this generation, not after it settled.
      await waitFor(`a handler call for generation ${i}`, () => handler.events.length > before);
    }
    const last = previous;
    assert.ok(last);
    await waitFor('the last generation registered', () => {
      const desired = manager.desiredState.get(path);
      return (
        desired !== undefined &&
        manager.actualState.pluginExistsWithCorrectUUID(desired) &&
        manager.sockets().find((s) => s.socketPath === path)?.state === 'registered'
      );
    });
    await waitFor('the handler to be idle', () => handler.events.at(-1) === 'register churn');
    assert.deepEqual(handler.violations, []);
    assert.deepEqual(handler.registeredNames(), ['churn']);
    const count = (op: string) => handler.events.filter((e) => e === `${op} churn`).length;
    // Each generation caused at least one handler call, and the calls kept cycling
    // validate -> register -> deregister (the violations check), ending registered once.
    assert.ok(handler.events.length >= generations, handler.events.join(', '));
    assert.ok(count('deregister') >= generations / 3 - 1, handler.events.join(', '));
    assert.equal(count('register') - count('deregister'), 1);
    assert.equal(manager.actualState.getRegisteredPlugins().length, 1);
    assert.ok(last.statuses.some((s) => s.pluginRegistered));
  });

  it('a plugin that stops answering while its socket file lingers is deregistered by liveness', async (t) => {
    const clock = new FakeClock();
    const { pluginsDir, manager, events, deregistered, socket, startPlugin } = await startManager(t, {
      clock,
      liveness: { periodMs: 1_000, timeoutMs: 300, failureThreshold: 3 },
    });
    const handler = new RecordingHandler();
    manager.addHandler('DevicePlugin', handler);
    const path = join(pluginsDir, 'frozen.sock');
    const child = await startPluginProcess(t, path, 'frozen');
    await waitFor('registered', async () => {
      const status = socket(path);
      // A dial that lands between the child's bind() and listen() is refused: let that backoff pass.
      if (status?.state === 'backoff' && status.retryAt !== undefined) await clock.set(status.retryAt + 1);
      return status?.state === 'registered';
    });

    // Healthy probes change nothing.
    await clock.advance(1_000);
    await clock.advance(1_000);
    assert.equal(socket(path)?.state, 'registered');

    child.kill('SIGSTOP');
    await waitFor(
      'liveness deregistration',
      async () => {
        await clock.advance(1_000);
        return !manager.actualState.pluginExists(path);
      },
      { intervalMs: 20 },
    );
    assert.ok(existsSync(path), 'the socket file lingers');
    await handler.waitForEvents((e) => e.includes('deregister frozen'));
    const failed = events.find((e) => e.type === 'failed' && e.error.code === 'BERTH_LIVENESS_FAILED');
    assert.ok(failed?.type === 'failed');
    assert.equal(failed.socketPath, path);
    assert.deepEqual(failed.plugin, { type: 'DevicePlugin', name: 'frozen' });
    assert.equal(failed.retryAt, null);
    assert.equal(failed.attempts, 3);
    assert.ok(!events.some((e) => e.type === 'socket-removed' && e.socketPath === path));
    await waitFor('onDeregistered', () => deregistered.some((d) => d.reason === 'liveness'));
    // `sockets` says when liveness probes the dead socket next: one period after it died.
    const justDead = socket(path);
    assert.equal(justDead?.state, 'failed');
    assert.ok(
      justDead?.retryAt !== undefined &&
        justDead.retryAt > failed.at &&
        justDead.retryAt <= clock.now() + 1_000,
      `next probe at ${justDead?.retryAt}, now ${clock.now()}`,
    );

    // A rescan sees the same file and must not bring the dead plugin back.
    await manager.rescan();
    await clock.advance(30_000);
    assert.equal(manager.desiredState.pluginExists(path), false);
    assert.equal(manager.actualState.pluginExists(path), false);
    const status = socket(path);
    assert.equal(status?.state, 'failed');
    assert.equal(status?.lastError?.code, 'BERTH_LIVENESS_FAILED');
    assert.ok(status?.retryAt !== undefined, 'the next recovery probe is shown after the interval doubled');
    assert.deepEqual(handler.events, ['validate frozen', 'register frozen', 'deregister frozen']);

    // The same process answers again on the same socket file: recovery probes notice and it
    // registers again, as a new generation (validate and register once more).
    child.kill('SIGCONT');
    await waitFor(
      'the recovered plugin registered again',
      async () => {
        await clock.advance(1_000);
        return socket(path)?.state === 'registered';
      },
      { intervalMs: 20 },
    );
    assert.deepEqual(handler.events, [
      'validate frozen',
      'register frozen',
      'deregister frozen',
      'validate frozen',
      'register frozen',
    ]);
    assert.ok(events.some((e) => e.type === 'discovered' && e.socketPath === path && e.at > failed.at));

    // A new socket file at the path is a new generation and registers normally.
    const revived = await startPlugin(path, { name: 'revived' });
    assert.deepEqual(await revived.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor('the new generation registered', () => socket(path)?.state === 'registered');
    assert.equal(manager.actualState.get(path)?.name, 'revived');
  });

  for (const mode of ['registrar', 'observe'] as const) {
    it(`${mode} mode: a plugin found stopped, then killed with its file left, is shown by why it is dead now`, async (t) => {
      const clock = new FakeClock();
      const { pluginsDir, manager, socket } = await startManager(
        t,
        { clock, mode, liveness: { periodMs: 1_000, timeoutMs: 300, failureThreshold: 3 } },
        false,
      );
      await mkdir(pluginsDir, { recursive: true }); // an observer does not create the directory it watches
      manager.addHandler('DevicePlugin', new RecordingHandler());
      await manager.start();
      const path = join(pluginsDir, 'frozen.sock');
      const child = await startPluginProcess(t, path, 'frozen');
      const live = mode === 'observe' ? 'observed' : 'registered';
      await waitFor(live, async () => {
        const status = socket(path);
        // A dial between the child's bind() and listen() is refused: let its retry come.
        if (status?.state !== live && status?.retryAt !== undefined && status.retryAt >= clock.now())
          await clock.set(status.retryAt + 1);
        return status?.state === live;
      });

      // Stopped: its connection stays open, its pings time out.
      child.kill('SIGSTOP');
      const given = await waitFor(
        'liveness gave up',
        // Read before advancing: a recovery probe starts only when the clock moves.
        async () => {
          const status = socket(path);
          if (status?.lastError?.code === 'BERTH_LIVENESS_FAILED') return status;
          await clock.advance(1_000);
          return undefined;
        },
        { intervalMs: 20 },
      );
      assert.equal(given.state, mode === 'observe' ? 'unreachable' : 'failed');
      assert.match(given.lastError?.message ?? '', /failed 3 consecutive liveness probes/);
      assert.equal(given.attempts, 3);

      // Killed: nothing listens on the file any more. The next recovery probe is refused.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      assert.ok(existsSync(path), 'the socket file lingers');
      const refused = await waitFor(
        'a recovery probe refused',
        async () => {
          const status = socket(path);
          if (/recovery probe failed/.test(status?.lastError?.message ?? '')) return status;
          await clock.advance(1_000);
          return undefined;
        },
        { intervalMs: 20 },
      );
      assert.equal(refused.state, mode === 'observe' ? 'stale' : 'failed');
      assert.equal(refused.lastError?.code, 'BERTH_LIVENESS_FAILED');
      assert.match(refused.lastError?.message ?? '', /ECONNREFUSED/);
      assert.equal(refused.attempts, 4, 'the failed recovery probe counts as an attempt');
      assert.equal(manager.actualState.pluginExists(path), false);
      assert.ok(
        refused.retryAt !== undefined && refused.retryAt > clock.now(),
        'the next probe is scheduled',
      );
    });
  }

  it('a plugin of an unknown type registers as soon as its handler is added', async (t) => {
    const { pluginsDir, manager, events, startPlugin, socket } = await startManager(t, {
      clock: new FakeClock(),
    });
    const plugin = await startPlugin(join(pluginsDir, 'foo.sock'), { name: 'foo', type: 'FooPlugin' });
    const text = `RegisterPlugin error -- no handler registered for plugin type: FooPlugin at socket ${plugin.socketPath}`;
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: false, error: text });
    const status = await waitFor('no-handler backoff', () => {
      const s = socket(plugin.socketPath);
      return s?.state === 'backoff' ? s : undefined;
    });
    assert.deepEqual(status.lastError, { code: 'BERTH_NO_HANDLER', message: text });
    assert.deepEqual(status.plugin, { type: 'FooPlugin', name: 'foo' });
    assert.ok(events.some((e) => e.type === 'failed' && e.error.code === 'BERTH_NO_HANDLER'));

    const handler = new RecordingHandler();
    manager.addHandler('FooPlugin', handler);
    assert.deepEqual(manager.handlerTypes(), ['FooPlugin']);
    assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor('registered', () => socket(plugin.socketPath)?.state === 'registered');
    assert.deepEqual(handler.events, ['validate foo', 'register foo']);
  });
});

describe('plugin manager: visibility and lifecycle', () => {
  it('sockets() shows pending, registered and backoff sockets, and a removed socket is deregistered', async (t) => {
    const clock = new FakeClock();
    const { pluginsDir, manager, events, deregistered, socket, startPlugin } = await startManager(t, {
      clock,
      timeouts: { getInfoMs: 600_000 },
    });
    manager.addHandler('DevicePlugin', new RecordingHandler());
    const hanging = await startPlugin(join(pluginsDir, 'a-hanging.sock'), {
      behaviour: { hangGetInfo: true },
    });
    const live = await startPlugin(join(pluginsDir, 'b-live.sock'), { name: 'live' });
    const stalePath = join(pluginsDir, 'c-stale.sock');
    await staleSocketAt(stalePath);

    await waitFor('three sockets in their states', () => {
      const states = manager.sockets().map((s) => [s.socketPath, s.state]);
      return (
        JSON.stringify(states) ===
        JSON.stringify([
          [hanging.socketPath, 'pending'],
          [live.socketPath, 'registered'],
          [stalePath, 'backoff'],
        ])
      );
    });
    await waitFor('the hanging GetInfo to arrive', () => hanging.getInfoCalls === 1);
    assert.equal(socket(hanging.socketPath)?.attempts, 1);
    assert.equal(socket(hanging.socketPath)?.lastError, undefined);
    assert.equal(socket(stalePath)?.lastError?.code, 'BERTH_DIAL_FAILED');
    assert.equal(typeof socket(stalePath)?.retryAt, 'number');
    assert.deepEqual(manager.liveSocketPaths(), new Set([live.socketPath]));

    const metrics = await manager.metricsRegistry.metrics();
    assert.ok(
      metrics.includes(
        `plugin_manager_total_plugins{socket_path="${live.socketPath}",state="actual_state_of_world"} 1`,
      ),
    );
    assert.ok(
      metrics.includes(
        `plugin_manager_total_plugins{socket_path="${stalePath}",state="desired_state_of_world"} 1`,
      ),
    );
    assert.ok(metrics.includes('berth_plugin_operation_failures_total{reason="BERTH_DIAL_FAILED"} 1'));

    await live.stop();
    await waitFor('deregistration of the removed socket', () => socket(live.socketPath) === undefined);
    assert.ok(events.some((e) => e.type === 'socket-removed' && e.socketPath === live.socketPath));
    await waitFor('onDeregistered', () => deregistered.length === 1);
    assert.equal(deregistered[0]?.reason, 'socket-removed');
    assert.equal(deregistered[0]?.plugin.name, 'live');
  });

  it('start() resolves after the first scan, stop() is idempotent and ends everything', async (t) => {
    const { dir, manager } = await startManager(t, {}, false);
    const pluginsDir = dir.join('plugins');
    await mkdir(pluginsDir, { recursive: true });
    const existing = createExamplePlugin({
      socketPath: join(pluginsDir, 'existing.sock'),
      name: 'existing',
      type: 'DevicePlugin',
      versions: VERSIONS,
    });
    t.after(() => existing.stop());
    await existing.start();
    manager.addHandler('DevicePlugin', new RecordingHandler());
    await manager.start();
    await manager.ready;
    // The start-up walk put the existing socket in the desired state before start() resolved.
    assert.equal(manager.desiredState.pluginExists(existing.socketPath), true);
    assert.deepEqual(await existing.nextStatus(), { pluginRegistered: true, error: '' });

    await Promise.all([manager.stop(), manager.stop()]);
    await manager.stop();
    await assert.rejects(manager.start(), { code: 'BERTH_SHUT_DOWN' });
    assert.equal((await manager.metricsRegistry.metrics()).trim(), '');
  });

  it('stop() before start() leaves ready rejected, and bad options are refused clearly', async (t) => {
    const { manager } = await startManager(t, {}, false);
    await manager.stop();
    await assert.rejects(manager.ready, { code: 'BERTH_SHUT_DOWN' });
    assert.throws(() => createPluginManager({ pluginsDir: '' }), /pluginsDir must be a non-empty path/);
    assert.throws(
      () => createPluginManager({ pluginsDir: '/tmp/x', resyncPeriodMs: -1 }),
      /resyncPeriodMs must be a positive number/,
    );
    assert.throws(
      () => createPluginManager({ pluginsDir: '/tmp/x', liveness: { failureThreshold: 0 } }),
      /liveness\.failureThreshold must be a positive number/,
    );
  });
});

/**
 * Puts a stale socket (a file nobody listens on) at `path`. It is made beside
 * the plugins directory and renamed in, so the manager never sees it while the
 * short-lived process that bound it is still alive.
 */
async function staleSocketAt(path: string): Promise<void> {
  const made = join(dirname(dirname(path)), `made-${basename(path)}`);
  await createStaleSocket(made);
  await rename(made, path);
}

/** A DevicePlugin in a child process (to be stopped or killed), serving on `path`; killed after the test. */
async function startPluginProcess(t: TestContext, path: string, name: string): Promise<ChildProcess> {
  const child = spawnModule(siblingModule(import.meta.url, './fixtures/example-plugin-process'), [
    path,
    name,
    'DevicePlugin',
  ]);
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
    await stopChild(child, 'SIGKILL');
  });
  await firstLine(child, 'serving');
  return child;
}

/** Resolves when the child prints `line` on stdout. */
function firstLine(child: ChildProcess, line: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    if (child.stdout === null) {
      reject(new Error('child has no stdout'));
      return;
    }
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`timed out waiting for "${line}": ${stderr}`)), 30_000);
    lines.on('line', (text) => {
      if (text.trim() !== line) return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before "${line}": ${stderr}`));
    });
  });
}
