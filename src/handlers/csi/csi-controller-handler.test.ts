/**
 * The csi-controller handler against real gRPC servers on unix sockets: the
 * CSIPlugin version rules and texts, registration asking the controller's
 * capabilities (and failing when the plugin serves no Controller service),
 * the endpoint looked up by driver name, newest registration first, and a
 * deregistration of an older instance that leaves the newer one in place.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { isBerthError } from '../../common/index.js';
import {
  type GrpcTestServer,
  recordingServices,
  startCsiTestDriver,
  startGrpcTestServer,
} from '../../testing/harness/index.js';
import { createTempDir } from '../../testing/index.js';
import type { RegisterContext } from '../types.js';
import { createCsiControllerHandler } from './csi-controller-handler.js';
import { csiControllerMethods } from './csi-wire.js';
import {
  ControllerGetCapabilitiesResponseSchema,
  ControllerServiceCapability_RPC_Type,
  ControllerServiceCapabilitySchema,
} from './gen/csi/v1/csi_pb.js';

const ctx = (socketPath: string): RegisterContext => ({
  type: 'csi-controller',
  socketPath,
  foundInDeprecatedDir: false,
});

/** A Controller service answering ControllerGetCapabilities with `caps`. */
function startController(
  path: string,
  caps: ControllerServiceCapability_RPC_Type[],
): Promise<GrpcTestServer> {
  const answer = create(ControllerGetCapabilitiesResponseSchema, {
    capabilities: caps.map((type) =>
      create(ControllerServiceCapabilitySchema, { type: { case: 'rpc', value: { type } } }),
    ),
  });
  return startGrpcTestServer(path, [
    [
      csiControllerMethods as ServiceDefinition,
      { controllerGetCapabilities: (_call: unknown, done: sendUnaryData<unknown>) => done(null, answer) },
    ],
  ]);
}

describe('csi-controller handler', () => {
  it('validates with the CSIPlugin rules and texts', async () => {
    const handler = createCsiControllerHandler(recordingServices());
    await handler.validatePlugin('c.example.com', '/e.sock', ['1.0.0'], ctx('/r/a.sock'));
    await assert.rejects(
      handler.validatePlugin('c.example.com', '/e.sock', ['0.3.0'], ctx('/r/a.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_VALIDATION_FAILED') &&
        /validation failed for CSI Driver c\.example\.com at endpoint \/e\.sock: .*None of the versions specified \["0\.3\.0"\] are supported/.test(
          err.message,
        ),
    );
  });

  it('registers a controller, records its capabilities, and is looked up by name', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const server = await startController(dir.join('c.sock'), [
      ControllerServiceCapability_RPC_Type.CREATE_DELETE_VOLUME,
      ControllerServiceCapability_RPC_Type.PUBLISH_UNPUBLISH_VOLUME,
    ]);
    t.after(() => server.stop());
    const services = recordingServices();
    const handler = createCsiControllerHandler(services);
    await handler.registerPlugin('c.example.com', server.socketPath, ['1.0.0'], ctx('/r/c.sock'));
    assert.equal(handler.lookupController('c.example.com'), server.socketPath);
    assert.equal(handler.lookupController('other.example.com'), undefined);
    assert.deepEqual(
      handler.controllers().map((c) => [c.name, c.version, c.capabilities]),
      [['c.example.com', '1.0.0', ['CREATE_DELETE_VOLUME', 'PUBLISH_UNPUBLISH_VOLUME']]],
    );
    assert.deepEqual(services.facts.at(-1)?.facts, {
      'csi.controllerCapabilities': '["CREATE_DELETE_VOLUME","PUBLISH_UNPUBLISH_VOLUME"]',
    });

    // A second instance with a higher version takes over; the first leaving changes nothing.
    const newer = await startController(dir.join('c2.sock'), [
      ControllerServiceCapability_RPC_Type.CREATE_DELETE_VOLUME,
    ]);
    t.after(() => newer.stop());
    await handler.registerPlugin('c.example.com', newer.socketPath, ['1.1.0'], ctx('/r/c2.sock'));
    await handler.deRegisterPlugin('c.example.com', server.socketPath, ctx('/r/c.sock'));
    assert.equal(handler.lookupController('c.example.com'), newer.socketPath);
    await handler.deRegisterPlugin('c.example.com', newer.socketPath, ctx('/r/c2.sock'));
    assert.equal(handler.lookupController('c.example.com'), undefined);
  });

  it('refuses a plugin whose endpoint does not answer, naming the call', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const handler = createCsiControllerHandler(recordingServices());
    await assert.rejects(
      handler.registerPlugin('gone.example.com', dir.join('nobody.sock'), ['1.0.0'], ctx('/r/g.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') &&
        /CSI controller plugin gone\.example\.com at .*: ControllerGetCapabilities failed/.test(err.message),
    );
    assert.equal(handler.lookupController('gone.example.com'), undefined);
  });

  it('refuses a plugin that serves no Controller service (a node plugin)', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    // A node-only CSI driver (Identity and Node, no Controller).
    const driver = await startCsiTestDriver(dir.join('node.sock'), { name: 'n.example.com', nodeId: 'n1' });
    t.after(() => driver.stop());
    const handler = createCsiControllerHandler(recordingServices());
    await assert.rejects(
      handler.registerPlugin('n.example.com', driver.socketPath, ['1.0.0'], ctx('/r/n.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') &&
        /CSI controller plugin n\.example\.com at .* serves no Controller capability; register it as CSIPlugin instead/.test(
          err.message,
        ),
    );
    assert.equal(handler.lookupController('n.example.com'), undefined);
  });

  it('refuses a Controller service with no capability (a node plugin that answers empty)', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const server = await startController(dir.join('empty.sock'), []);
    t.after(() => server.stop());
    const handler = createCsiControllerHandler(recordingServices());
    await assert.rejects(
      handler.registerPlugin('e.example.com', server.socketPath, ['1.0.0'], ctx('/r/e.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') && /serves no Controller capability/.test(err.message),
    );
  });
});
