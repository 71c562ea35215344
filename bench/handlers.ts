/**
 * What the built-in handlers add to a plugin's life.
 *
 * CSI: the handler's registerPlugin (one fresh connection, GetPluginInfo,
 * Probe, NodeGetCapabilities, NodeGetInfo, the facts) against the baseline
 * the kubelet pays: one NodeGetInfo on a fresh connection.
 *
 * DRA: a one-claim prepare through the handler (claim checks, instance
 * choice, per-claim result) against the baseline of the same
 * NodePrepareResources call on an already-connected grpc-js client.
 *
 * Both against real drivers on unix sockets (src/testing test drivers),
 * interleaved per iteration after a warm-up.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { silentLogger, systemClock } from '../src/common/index.js';
import { csiNodeService, NodeGetInfoRequestSchema } from '../src/handlers/csi/csi-wire.js';
import { createCsiHandler } from '../src/handlers/csi/index.js';
import { draApis } from '../src/handlers/dra/dra-wire.js';
import { createDraHandler } from '../src/handlers/dra/index.js';
import { callUnary, unixTarget } from '../src/registration/index.js';
import { startCsiTestDriver, startDraTestDriver } from '../src/testing/harness/index.js';
import { waitFor } from '../src/testing/index.js';
import { type BenchSection, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { makeTempDir, nowMs } from './lib/timing.js';

const WARMUP = 20;
const ITERATIONS = 300;

const services = {
  logger: silentLogger,
  clock: systemClock,
  dataDir: '/nonexistent',
  options: {},
  emit() {},
  recordFacts() {},
};

export async function handlersBenchmark(): Promise<BenchSection> {
  const temp = makeTempDir('berth-bench-handlers-');
  const dir = { join: (name: string) => `${temp.path}/${name}`, remove: temp.remove };
  const csiDriver = await startCsiTestDriver(dir.join('csi.sock'), {
    name: 'bench.csi',
    nodeId: 'n',
    topology: { zone: 'a' },
    capabilities: ['STAGE_UNSTAGE_VOLUME'],
  });
  const draDriver = await startDraTestDriver(dir.join('dra.sock'), 'v1.DRAPlugin');
  const csi = createCsiHandler(services);
  const dra = createDraHandler(services);
  const direct = new Client(unixTarget(draDriver.socketPath), credentials.createInsecure());
  const samples = {
    nodeGetInfo: [] as number[],
    csiRegister: [] as number[],
    direct: [] as number[],
    prepare: [] as number[],
  };
  try {
    await dra.registerPlugin('bench.dra', draDriver.socketPath, ['v1.DRAPlugin'], {
      type: 'DRAPlugin',
      socketPath: dir.join('dra-reg.sock'),
      foundInDeprecatedDir: false,
    });
    await waitFor('the DRA instance to connect', () => dra.drivers()[0]?.usable === true);
    const claims = [{ namespace: 'ns', uid: 'u1', name: 'c1' }];
    const api = draApis['v1.DRAPlugin'];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const keep = i >= WARMUP;
      const context = {
        type: 'CSIPlugin',
        socketPath: dir.join(`reg-${i}.sock`),
        foundInDeprecatedDir: false,
      };

      let start = nowMs();
      const client = new Client(unixTarget(csiDriver.socketPath), credentials.createInsecure());
      await callUnary(
        client,
        csiNodeService.nodeGetInfo,
        create(NodeGetInfoRequestSchema),
        10_000,
        undefined,
        'bench',
      );
      client.close();
      if (keep) samples.nodeGetInfo.push(nowMs() - start);

      start = nowMs();
      await csi.registerPlugin('bench.csi', csiDriver.socketPath, ['1.0.0'], context);
      if (keep) samples.csiRegister.push(nowMs() - start);
      await csi.deRegisterPlugin('bench.csi', csiDriver.socketPath, context);

      start = nowMs();
      await callUnary(direct, api.prepare, api.prepareRequest(claims), 10_000, undefined, 'bench');
      if (keep) samples.direct.push(nowMs() - start);

      start = nowMs();
      await dra.prepare('bench.dra', claims);
      if (keep) samples.prepare.push(nowMs() - start);
    }
  } finally {
    direct.close();
    await dra.stop();
    await csi.stop();
    await csiDriver.stop();
    await draDriver.stop();
    dir.remove();
  }
  const nodeGetInfo = summarize(samples.nodeGetInfo);
  const directSummary = summarize(samples.direct);
  return {
    title: 'Built-in handlers: CSI registration and DRA prepare',
    method:
      `${ITERATIONS} iterations after ${WARMUP} warm-up, interleaved. CSI: the handler's registerPlugin ` +
      '(fresh connection, GetPluginInfo, Probe, NodeGetCapabilities, NodeGetInfo) against one NodeGetInfo on a ' +
      'fresh connection (what the kubelet calls). DRA: a one-claim prepare through the handler against the same ' +
      'call on an already-connected client. Real test drivers on unix sockets in the same process.',
    tables: [
      {
        caption: 'CSI registration work; baseline: one NodeGetInfo on a fresh connection',
        columns: LATENCY_COLUMNS,
        rows: [
          latencyRow('NodeGetInfo, fresh connection', nodeGetInfo),
          latencyRow('CSI handler registerPlugin (4 calls)', summarize(samples.csiRegister), nodeGetInfo),
        ],
      },
      {
        caption: 'DRA prepare of one claim; baseline: the bare gRPC call on a connected client',
        columns: LATENCY_COLUMNS,
        rows: [
          latencyRow('NodePrepareResources, direct', directSummary),
          latencyRow('DRA handler prepare', summarize(samples.prepare), directSummary),
        ],
      },
    ],
    notes: [],
  };
}
