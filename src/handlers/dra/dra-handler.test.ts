/**
 * The DRA handler against real DRA drivers on unix sockets: the kubelet's
 * registration_test.go and plugins_store_test.go scenarios (as of 1.34,
 * where ["1.0.0"] is refused and the plugin's order wins), connection
 * monitoring, driver-unusable timing on an injected clock, and the per-claim
 * rules of NodePrepareResources / NodeUnprepareResources.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { type DraTestDriver, recordingServices, startDraTestDriver } from '../../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../../testing/index.js';
import type { PluginCallContext } from '../types.js';
import { createDraHandler, type DraHandler } from './dra-handler.js';

const ctx = (socketPath: string): PluginCallContext => ({
  type: 'DRAPlugin',
  socketPath,
  foundInDeprecatedDir: false,
});

type After = { after(fn: () => unknown): void };

function setup(t: After, options: Record<string, unknown> = {}) {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const clock = new FakeClock();
  const services = recordingServices({ clock, options });
  const handler = createDraHandler(services);
  t.after(() => handler.stop());
  return { dir, clock, services, handler };
}

async function driverAt(
  t: After,
  path: string,
  service: 'v1.DRAPlugin' | 'v1beta1.DRAPlugin' = 'v1.DRAPlugin',
) {
  const driver = await startDraTestDriver(path, service);
  t.after(() => driver.stop());
  return driver;
}

function instanceState(handler: DraHandler, name: string, endpoint: string) {
  return handler
    .drivers()
    .find((d) => d.name === name)
    ?.instances.find((i) => i.endpoint === endpoint);
}

const connected = (handler: DraHandler, name: string, endpoint: string) =>
  waitFor(`${endpoint} connected`, () => instanceState(handler, name, endpoint)?.connected === true);
const disconnected = (handler: DraHandler, name: string, endpoint: string) =>
  waitFor(`${endpoint} disconnected`, () => instanceState(handler, name, endpoint)?.connected === false);

describe('DRA handler: TestRegistrationHandler (kubelet 1.34 rules)', () => {
  const cases: Array<{ name: string; versions: string[]; chosen?: string; error?: string }> = [
    {
      name: 'no-services-provided',
      versions: [],
      error:
        'invalid supported gRPC versions of DRA driver plugin pluginA at endpoint /e/a: empty list of supported gRPC services (aka supported versions)',
    },
    { name: 'current-service', versions: ['v1.DRAPlugin'], chosen: 'v1.DRAPlugin' },
    { name: 'beta-service', versions: ['v1beta1.DRAPlugin'], chosen: 'v1beta1.DRAPlugin' },
    {
      name: 'plugin-order-wins',
      versions: ['v1beta1.DRAPlugin', 'v1.DRAPlugin'],
      chosen: 'v1beta1.DRAPlugin',
    },
    { name: 'unknown-first', versions: ['v1alpha4.Node', 'v1.DRAPlugin'], chosen: 'v1.DRAPlugin' },
    {
      name: 'version',
      versions: ['1.0.0'],
      error:
        'invalid supported gRPC versions of DRA driver plugin pluginA at endpoint /e/a: none of services supported by the plugin (["1.0.0"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
    },
  ];
  for (const c of cases) {
    it(c.name, async (t) => {
      const { handler } = setup(t);
      if (c.error !== undefined) {
        await assert.rejects(
          handler.validatePlugin('pluginA', '/e/a', c.versions, ctx('/r/a.sock')),
          (err: unknown) => isBerthError(err, 'BERTH_VALIDATION_FAILED') && err.message === c.error,
        );
        await assert.rejects(
          handler.registerPlugin('pluginA', '/e/a', c.versions, ctx('/r/a.sock')),
          (err: unknown) => isBerthError(err, 'BERTH_REGISTER_FAILED') && err.message === c.error,
        );
        assert.deepEqual(handler.drivers(), []);
        return;
      }
      await handler.validatePlugin('pluginA', '/e/a', c.versions, ctx('/r/a.sock'));
      await handler.registerPlugin('pluginA', '/e/a', c.versions, ctx('/r/a.sock'));
      assert.equal(handler.drivers()[0]?.chosen?.service, c.chosen);
    });
  }

  it('replace: the same driver at a second endpoint is a second instance', async (t) => {
    const { handler } = setup(t);
    await handler.registerPlugin('pluginA', '/e/a', ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await handler.registerPlugin('pluginA', '/e/b', ['v1beta1.DRAPlugin'], ctx('/r/b.sock'));
    const [driver] = handler.drivers();
    assert.deepEqual(
      driver?.instances.map((i) => [i.endpoint, i.service]),
      [
        ['/e/b', 'v1beta1.DRAPlugin'],
        ['/e/a', 'v1.DRAPlugin'],
      ],
      'newest first',
    );
  });
});

describe('DRA handler: plugins_store_test', () => {
  it('TestAddSameName: the same name and endpoint is refused; a new endpoint is added; removing one keeps the other', async (t) => {
    const { handler } = setup(t);
    await handler.registerPlugin('p', '/e/old', ['v1.DRAPlugin'], ctx('/r/old.sock'));
    await assert.rejects(
      handler.registerPlugin('p', '/e/old', ['v1.DRAPlugin'], ctx('/r/again.sock')),
      (err: unknown) =>
        isBerthError(err) && err.message === 'endpoint /e/old already registered for plugin p',
    );
    await handler.registerPlugin('p', '/e/new', ['v1.DRAPlugin'], ctx('/r/new.sock'));
    assert.equal(handler.drivers()[0]?.instances.length, 2);
    await handler.deRegisterPlugin('p', '/e/old', ctx('/r/old.sock'));
    assert.deepEqual(
      handler.drivers()[0]?.instances.map((i) => i.endpoint),
      ['/e/new'],
    );
    // Deregistering an instance berth does not know is a no-op.
    await handler.deRegisterPlugin('p', '/e/unknown', ctx('/r/x.sock'));
    assert.equal(handler.drivers()[0]?.instances.length, 1);
  });
});

describe('DRA handler: connections', () => {
  it('connects right after registration and prefers the newest connected instance', async (t) => {
    const { dir, handler } = setup(t);
    const a = await driverAt(t, dir.join('a.sock'));
    await handler.registerPlugin('gpu.example.com', a.socketPath, ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await connected(handler, 'gpu.example.com', a.socketPath);
    // A newer instance whose endpoint has no server is not chosen over a connected one.
    await handler.registerPlugin('gpu.example.com', dir.join('b.sock'), ['v1.DRAPlugin'], ctx('/r/b.sock'));
    await waitFor('b failed to connect', () => {
      const state = instanceState(handler, 'gpu.example.com', dir.join('b.sock'))?.state;
      return state === 'transient-failure' || state === 'idle';
    });
    const [driver] = handler.drivers();
    assert.equal(driver?.usable, true);
    assert.equal(driver?.chosen?.endpoint, a.socketPath);
    const result = await handler.prepare('gpu.example.com', [{ namespace: 'ns', uid: 'u1', name: 'c1' }]);
    assert.equal(result.endpoint, a.socketPath);
    assert.deepEqual(a.calls, ['prepare u1']);
    // Once b serves, it is connected and, being newest, chosen.
    const b = await driverAt(t, dir.join('b.sock'));
    await connected(handler, 'gpu.example.com', b.socketPath);
    assert.equal(handler.drivers()[0]?.chosen?.endpoint, b.socketPath);
  });

  it('emits driver-unusable after the wipe delay once the last instance disconnects', async (t) => {
    const { dir, clock, services, handler } = setup(t, { wipeDelayMs: 30_000 });
    const a = await driverAt(t, dir.join('a.sock'));
    await handler.registerPlugin('d', a.socketPath, ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await connected(handler, 'd', a.socketPath);
    const since = clock.now();
    await a.stop();
    await disconnected(handler, 'd', a.socketPath);
    assert.equal(handler.drivers()[0]?.usable, false);
    await clock.advance(29_999);
    assert.deepEqual(services.events, [], 'nothing before the delay');
    await clock.advance(1);
    assert.deepEqual(services.events, [
      { type: 'driver-unusable', at: since + 30_000, plugin: { type: 'DRAPlugin', name: 'd' }, since },
    ]);
    // Reported once per unusable period.
    await clock.advance(60_000);
    assert.equal(services.events.length, 1);
  });

  it('a reconnect inside the delay cancels driver-unusable', async (t) => {
    const { dir, clock, services, handler } = setup(t);
    const path = dir.join('a.sock');
    const a = await driverAt(t, path);
    await handler.registerPlugin('d', path, ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await connected(handler, 'd', path);
    await a.stop();
    await disconnected(handler, 'd', path);
    await clock.advance(10_000);
    await driverAt(t, path); // the plugin restarts on the same socket
    await connected(handler, 'd', path);
    await clock.advance(60_000);
    assert.deepEqual(services.events, []);
    assert.equal(handler.drivers()[0]?.unusableSince, null);
  });

  it('seamless upgrade: a second instance registers, the first goes; no driver-unusable', async (t) => {
    const { dir, clock, services, handler } = setup(t);
    const a = await driverAt(t, dir.join('a.sock'));
    await handler.registerPlugin('d', a.socketPath, ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await connected(handler, 'd', a.socketPath);
    const b = await driverAt(t, dir.join('b.sock'));
    await handler.registerPlugin('d', b.socketPath, ['v1.DRAPlugin'], ctx('/r/b.sock'));
    await connected(handler, 'd', b.socketPath);
    await handler.deRegisterPlugin('d', a.socketPath, ctx('/r/a.sock'));
    await a.stop();
    await clock.advance(120_000);
    assert.deepEqual(services.events, []);
    const result = await handler.unprepare('d', [{ namespace: 'ns', uid: 'u1', name: 'c1' }]);
    assert.equal(result.endpoint, b.socketPath);
    assert.equal(result.ok, true);
  });

  it('the last instance deregistering starts the delay; a new registration cancels it', async (t) => {
    const { dir, clock, services, handler } = setup(t);
    const a = await driverAt(t, dir.join('a.sock'));
    await handler.registerPlugin('d', a.socketPath, ['v1.DRAPlugin'], ctx('/r/a.sock'));
    await connected(handler, 'd', a.socketPath);
    await handler.deRegisterPlugin('d', a.socketPath, ctx('/r/a.sock'));
    assert.equal(clock.pendingTimers, 1);
    await clock.advance(20_000);
    await handler.registerPlugin('d', a.socketPath, ['v1.DRAPlugin'], ctx('/r/a2.sock'));
    await connected(handler, 'd', a.socketPath);
    await clock.advance(60_000);
    assert.deepEqual(services.events, []);
    // And without a comeback, the event comes after the (configured) delay.
    await handler.deRegisterPlugin('d', a.socketPath, ctx('/r/a2.sock'));
    await clock.advance(30_000);
    assert.equal(services.events.length, 1);
    assert.deepEqual(handler.drivers(), [], 'a driver with no instances is not listed');
  });
});

describe('DRA handler: prepare and unprepare', () => {
  for (const service of ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] as const) {
    it(`prepares and unprepares through ${service}, claim by claim`, async (t) => {
      const { dir, handler } = setup(t);
      const driver: DraTestDriver = await driverAt(t, dir.join('d.sock'), service);
      await handler.registerPlugin('d', driver.socketPath, [service], ctx('/r/d.sock'));
      const claims = [
        { namespace: 'ns', uid: 'u1', name: 'ok' },
        { namespace: 'ns', uid: 'u2', name: 'bad' },
        { namespace: 'ns', uid: 'u3', name: 'left-out' },
      ];
      driver.behaviour = { errors: { u2: 'no such device' }, omit: ['u3'] };
      const prepared = await handler.prepare('d', claims);
      assert.equal(prepared.service, service);
      assert.equal(prepared.ok, false);
      assert.deepEqual(prepared.claims, [
        {
          namespace: 'ns',
          uid: 'u1',
          name: 'ok',
          ok: true,
          error: null,
          devices: [
            {
              requestNames: ['req-0'],
              poolName: 'pool-a',
              deviceName: 'dev-ok',
              cdiDeviceIds: ['example.com/device=ok'],
            },
          ],
        },
        { namespace: 'ns', uid: 'u2', name: 'bad', ok: false, error: 'no such device' },
        {
          namespace: 'ns',
          uid: 'u3',
          name: 'left-out',
          ok: false,
          error: "claim missing from the plugin's NodePrepareResources response",
        },
      ]);
      const unprepared = await handler.unprepare('d', claims);
      assert.deepEqual(
        unprepared.claims.map((c) => [c.uid, c.ok, c.error]),
        [
          ['u1', true, null],
          ['u2', false, 'no such device'],
          ['u3', false, "claim missing from the plugin's NodeUnprepareResources response"],
        ],
      );
      driver.behaviour = {};
      const clean = await handler.unprepare('d', claims);
      assert.equal(clean.ok, true);
      assert.deepEqual(driver.calls, ['prepare u1,u2,u3', 'unprepare u1,u2,u3', 'unprepare u1,u2,u3']);
    });
  }

  it('a failed call is one error for the whole request; unknown drivers and bad claims are refused', async (t) => {
    const { dir, handler } = setup(t);
    const driver = await driverAt(t, dir.join('d.sock'));
    await handler.registerPlugin('d', driver.socketPath, ['v1.DRAPlugin'], ctx('/r/d.sock'));
    driver.behaviour = { failCall: 'driver exploded' };
    await assert.rejects(
      handler.prepare('d', [{ namespace: 'ns', uid: 'u1', name: 'c' }]),
      (err: unknown) =>
        isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED') &&
        err.message ===
          `NodePrepareResources of DRA driver d at ${driver.socketPath} failed: rpc error: code = Internal desc = driver exploded`,
    );
    await assert.rejects(
      handler.prepare('nope', [{ namespace: 'ns', uid: 'u1', name: 'c' }]),
      (err: unknown) =>
        isBerthError(err, 'BERTH_PLUGIN_NOT_FOUND') && err.message === 'DRA driver nope is not registered',
    );
    await assert.rejects(
      handler.prepare('', [{ namespace: 'ns', uid: 'u1', name: 'c' }]),
      /DRA driver name is empty/,
    );
    for (const claims of [
      [],
      [{ namespace: 'ns', uid: '', name: 'c' }],
      [{ namespace: 'ns', uid: 'u', name: 7 }],
      [
        { namespace: 'ns', uid: 'u', name: 'a' },
        { namespace: 'ns', uid: 'u', name: 'b' },
      ],
    ]) {
      await assert.rejects(
        handler.prepare('d', claims as never),
        (err: unknown) => isBerthError(err, 'BERTH_BAD_REQUEST'),
        JSON.stringify(claims),
      );
    }
    const small = setup(t, { maxClaimsPerCall: 2 }).handler;
    await small.registerPlugin('d', driver.socketPath, ['v1.DRAPlugin'], ctx('/r/d.sock'));
    await assert.rejects(
      small.prepare(
        'd',
        ['a', 'b', 'c'].map((uid) => ({ namespace: 'ns', uid, name: uid })),
      ),
      /at most 2 claims per call, got 3/,
    );
  });

  it('a call that runs past the call timeout fails with DeadlineExceeded (plugin_test: short pluginClientTimeout)', async (t) => {
    const { dir, handler } = setup(t, { callTimeoutMs: 60_000 });
    const driver = await driverAt(t, dir.join('d.sock'));
    driver.behaviour = { hang: true };
    // The registration's own pluginClientTimeout wins over the configured one, as in the kubelet.
    await handler.registerPlugin('d', driver.socketPath, ['v1.DRAPlugin'], {
      ...ctx('/r/d.sock'),
      pluginClientTimeoutMs: 200,
    });
    await assert.rejects(
      handler.prepare('d', [{ namespace: 'ns', uid: 'u1', name: 'c' }]),
      (err: unknown) =>
        isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED') && /code = DeadlineExceeded/.test(err.message),
    );
  });
});
