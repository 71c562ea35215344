/**
 * Registry benchmarks.
 * 1. Scale: the latency and rate of one durable change (SQLite, writer
 *    thread, group commit) with 0, 1,000 and 5,000 instances registered, next
 *    to what the old design (rewrite the whole registry on the event loop per
 *    change) costs at the same size; rows written per change.
 * 2. Event-loop delay during a burst of 5,000 concurrent registrations.
 * 3. One plugin with a 3 MB name: other registrations stay as fast.
 * 4. Subscribers: a subscriber that never reads does not slow registration
 *    (each subscriber has its own queue).
 */
import { setMaxListeners } from 'node:events';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { PluginInstanceInfo, RegistryEvent } from '../src/common/index.js';
import { createRegistry, REGISTRY_DEFAULTS, type Registry } from '../src/registry/index.js';
import {
  createMemoryStorage,
  createSqliteStorage,
  type RegistryStorage,
  type SqliteStorage,
} from '../src/storage/index.js';
import type { BenchSection, BenchTable } from './lib/report.js';
import { formatMs, formatRate, formatRatio, summarize } from './lib/stats.js';
import { interleave, makeTempDir, nowMs, yieldToLoop } from './lib/timing.js';

const TYPE = 'csi-node';
/** Plugins registered before measuring, so every persisted write carries a realistic registry. */
const POPULATION = 20;
/** Distinct names the measured operations cycle through. */
const CYCLE = 50;
const WARMUP_PAIRS = 200;
const ROUNDS = 40;
/** register+deregister pairs per case per round. */
const PAIRS_PER_ROUND = 100;
const SUBSCRIBERS = 10;

interface Case {
  name: string;
  registry: Registry;
  pairsPerRound: number;
  register: number[];
  deregister: number[];
  /** Time inside the registry calls, and wall time of the batches (calls + draining subscribers). */
  callMs: number;
  wallMs: number;
  ops: number;
  cleanup: () => Promise<void> | void;
}

function instance(index: number, label: string): PluginInstanceInfo {
  const name = `${label}-${index}`;
  return {
    type: TYPE,
    name,
    version: '1.0.0',
    connectionInfo: { socketPath: `/run/bench/${name}.sock` },
    allocId: `/run/bench/${name}.sock`,
    options: { driver: name },
  };
}

async function newCase(
  name: string,
  registry: Registry,
  pairsPerRound: number,
  cleanup: Case['cleanup'],
): Promise<Case> {
  await registry.start();
  await Promise.all(
    Array.from({ length: POPULATION }, (_, i) => registry.registerPlugin(instance(i, 'resident'))),
  );
  return {
    name,
    registry,
    pairsPerRound,
    register: [],
    deregister: [],
    callMs: 0,
    wallMs: 0,
    ops: 0,
    cleanup,
  };
}

/** Runs `pairs` register/deregister pairs; records samples only when `record`. */
async function runPairs(c: Case, pairs: number, record: boolean, offset: number): Promise<void> {
  const batchStart = nowMs();
  let inCalls = 0;
  for (let i = 0; i < pairs; i++) {
    const info = instance((offset + i) % CYCLE, 'churn');
    const t0 = nowMs();
    await c.registry.registerPlugin(info);
    const t1 = nowMs();
    await c.registry.deregisterPlugin(info.type, info.name, info.allocId);
    const t2 = nowMs();
    inCalls += t2 - t0;
    if (record) {
      c.register.push(t1 - t0);
      c.deregister.push(t2 - t1);
    }
    // Let subscribers drain now and then, as a live daemon's event loop would.
    if (i % 10 === 9) await yieldToLoop();
  }
  await yieldToLoop();
  if (record) {
    c.callMs += inCalls;
    c.wallMs += nowMs() - batchStart;
    c.ops += pairs * 2;
  }
}

/** Subscribes `readers` draining subscribers and `stalled` that never read. */
function addSubscribers(registry: Registry, readers: number, stalled: number, signal: AbortSignal) {
  const drained: Array<Promise<number>> = [];
  for (let i = 0; i < readers; i++) {
    const events = registry.subscribe(TYPE, { signal });
    drained.push(
      (async () => {
        let seen = 0;
        for await (const _event of events) seen += 1;
        return seen;
      })(),
    );
  }
  // Never read: its queue only grows (or lags, when bounded).
  const stalledIterators: Array<AsyncIterator<RegistryEvent>> = [];
  for (let i = 0; i < stalled; i++)
    stalledIterators.push(registry.subscribe(TYPE, { signal })[Symbol.asyncIterator]());
  return { drained, stalledIterators };
}

async function drainCount(iterator: AsyncIterator<RegistryEvent> | undefined): Promise<number> {
  if (iterator === undefined) return 0;
  let count = 0;
  // Bounded: the queue was closed by the abort, so this ends after the pending items.
  for (let item = await iterator.next(); !item.done; item = await iterator.next()) count += 1;
  return count;
}

function unique(values: number[]): string {
  return [...new Set(values)].join('/');
}

function tableFor(caption: string, cases: Case[]): BenchTable {
  const [baseline] = cases;
  if (baseline === undefined) throw new Error('no cases');
  const baseRegister = summarize(baseline.register);
  const baseRate = baseline.ops / (baseline.callMs / 1000);
  const rows = cases.map((c) => {
    const reg = summarize(c.register);
    const dereg = summarize(c.deregister);
    const rate = c.ops / (c.callMs / 1000);
    const isBase = c === baseline;
    return [
      c.name,
      String(c.ops),
      formatMs(reg.p50),
      formatMs(reg.p90),
      formatMs(reg.p99),
      formatMs(dereg.p50),
      formatMs(dereg.p99),
      formatRate(rate),
      formatRate(c.ops / (c.wallMs / 1000)),
      isBase ? '1× (baseline)' : formatRatio(reg.p50 / baseRegister.p50),
      isBase ? '1× (baseline)' : formatRatio(rate / baseRate),
    ];
  });
  return {
    caption,
    columns: [
      'case',
      'ops',
      'register p50',
      'register p90',
      'register p99',
      'deregister p50',
      'deregister p99',
      'ops/s (calls)',
      'ops/s (wall)',
      'register p50 ratio',
      'ops/s ratio',
    ],
    rows,
  };
}

async function measureCases(cases: Case[]): Promise<void> {
  for (const c of cases) await runPairs(c, Math.min(WARMUP_PAIRS, c.pairsPerRound * 4), false, 0);
  await interleave(
    ROUNDS,
    cases.map((c) => (round: number) => runPairs(c, c.pairsPerRound, true, round * c.pairsPerRound)),
  );
}

const SCALES = [0, 1000, 5000];
/** Sequential (awaited one by one) changes measured per scale. */
const SEQUENTIAL_CHANGES = 300;
/** Changes fired together per scale, for the group-committed rate. */
const CONCURRENT_CHANGES = 1000;
/** Whole-state rewrites timed per scale (the old design's cost of one change). */
const OLD_DESIGN_SAMPLES = 15;
const HUGE_NAME_BYTES = 3 * 1024 * 1024;

interface ScaleResult {
  population: number;
  fill: { ms: number; transactions: number };
  latency: number[];
  sequentialRate: number;
  concurrentRate: number;
  concurrentTransactions: number;
  rowsPerChange: number;
  oldDesign: number[];
}

async function openSqlite(path: string): Promise<SqliteStorage> {
  const storage = createSqliteStorage({ path });
  await storage.start();
  return storage;
}

/** Registers `count` instances at once; returns how long until all were durable. */
async function burst(registry: Registry, count: number, label: string): Promise<number> {
  return (await timedBurst(registry, count, label)).ms;
}

/** As burst, also timing the caller's own synchronous loop that makes the calls. */
async function timedBurst(
  registry: Registry,
  count: number,
  label: string,
): Promise<{ ms: number; submitMs: number }> {
  const t0 = nowMs();
  const pending = Array.from({ length: count }, (_, i) => registry.registerPlugin(instance(i, label)));
  const submitMs = nowMs() - t0;
  await Promise.all(pending);
  return { ms: nowMs() - t0, submitMs };
}

async function measureScale(dir: string, population: number): Promise<ScaleResult> {
  const storage = await openSqlite(`${dir}/scale-${population}.db`);
  const registry = createRegistry({ storage });
  await registry.start();
  try {
    const before = storage.writeStats;
    const fillMs = await burst(registry, population, 'resident');
    const fill = { ms: fillMs, transactions: storage.writeStats.transactions - before.transactions };
    for (let i = 0; i < 20; i++) {
      const info = instance(i % CYCLE, 'warm');
      await registry.registerPlugin(info);
      await registry.deregisterPlugin(info.type, info.name, info.allocId);
    }
    // One change at a time: each waits for its own commit (the latency a plugin sees before Notify).
    const latency: number[] = [];
    const stats0 = storage.writeStats;
    const seqStart = nowMs();
    for (let i = 0; i < SEQUENTIAL_CHANGES / 2; i++) {
      const info = instance(i % CYCLE, 'churn');
      let t0 = nowMs();
      await registry.registerPlugin(info);
      latency.push(nowMs() - t0);
      t0 = nowMs();
      await registry.deregisterPlugin(info.type, info.name, info.allocId);
      latency.push(nowMs() - t0);
    }
    const sequentialRate = SEQUENTIAL_CHANGES / ((nowMs() - seqStart) / 1000);
    const stats1 = storage.writeStats;
    const rowsPerChange = (stats1.rowsWritten - stats0.rowsWritten) / (stats1.changes - stats0.changes);
    // Many at once: they share transactions (group commit).
    const c0 = nowMs();
    const infos = Array.from({ length: CONCURRENT_CHANGES / 2 }, (_, i) => instance(i, 'storm'));
    await Promise.all(infos.map((info) => registry.registerPlugin(info)));
    await Promise.all(infos.map((info) => registry.deregisterPlugin(info.type, info.name, info.allocId)));
    const concurrentRate = CONCURRENT_CHANGES / ((nowMs() - c0) / 1000);
    const concurrentTransactions = storage.writeStats.transactions - stats1.transactions;
    // The old design: every change read the whole registry and rewrote it in one synchronous transaction.
    const oldDesign: number[] = [];
    const snapshot = storage.getDynamicPluginRegistryState() ?? { plugins: {} };
    for (let i = 0; i < OLD_DESIGN_SAMPLES; i++) {
      const t0 = nowMs();
      storage.putDynamicPluginRegistryState(JSON.parse(JSON.stringify(snapshot)));
      oldDesign.push(nowMs() - t0);
      await yieldToLoop();
    }
    return {
      population,
      fill,
      latency,
      sequentialRate,
      concurrentRate,
      concurrentTransactions,
      rowsPerChange,
      oldDesign,
    };
  } finally {
    await registry.stop();
    await storage.stop();
  }
}

interface LoopDelay {
  /** The same monitor over 300 ms with nothing to do: what the shared machine alone causes. */
  idle: { p99: number; max: number };
  registrations: number;
  ms: number;
  submitMs: number;
  /** The longest garbage-collection pause seen during the burst. */
  maxGcMs: number;
  transactions: number;
  p50: number;
  p99: number;
  max: number;
}

/** Event-loop delay while 5,000 registrations are made at once and committed. */
async function measureLoopDelay(dir: string): Promise<LoopDelay> {
  const storage = await openSqlite(`${dir}/loop-delay.db`);
  const registry = createRegistry({ storage });
  await registry.start();
  try {
    const quiet = monitorEventLoopDelay({ resolution: 1 });
    quiet.enable();
    await new Promise((resolve) => setTimeout(resolve, 300));
    quiet.disable();
    const idle = { p99: quiet.percentile(99) / 1e6, max: quiet.max / 1e6 };
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    const before = storage.writeStats.transactions;
    let maxGcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) maxGcMs = Math.max(maxGcMs, entry.duration);
    });
    gc.observe({ entryTypes: ['gc'] });
    histogram.enable();
    const { ms, submitMs } = await timedBurst(registry, 5000, 'burst');
    // One more turn so a stall at the very end is sampled too.
    await new Promise((resolve) => setTimeout(resolve, 5));
    histogram.disable();
    for (const entry of gc.takeRecords()) maxGcMs = Math.max(maxGcMs, entry.duration);
    gc.disconnect();
    return {
      idle,
      registrations: 5000,
      ms,
      submitMs,
      maxGcMs,
      transactions: storage.writeStats.transactions - before,
      p50: histogram.percentile(50) / 1e6,
      p99: histogram.percentile(99) / 1e6,
      max: histogram.max / 1e6,
    };
  } finally {
    await registry.stop();
    await storage.stop();
  }
}

/** Change latency of ordinary plugins with and without one 3 MB-named plugin registered. */
async function measureHugeName(dir: string): Promise<{ without: number[]; with: number[]; rows: number }> {
  const storage = await openSqlite(`${dir}/huge.db`);
  const registry = createRegistry({ storage });
  await registry.start();
  const sample = async (label: string) => {
    const samples: number[] = [];
    for (let i = 0; i < 100; i++) {
      const info = instance(i % CYCLE, label);
      const t0 = nowMs();
      await registry.registerPlugin(info);
      samples.push(nowMs() - t0);
      await registry.deregisterPlugin(info.type, info.name, info.allocId);
    }
    return samples;
  };
  try {
    await burst(registry, 100, 'resident');
    const without = await sample('plain');
    await registry.registerPlugin({ ...instance(0, 'huge'), name: 'x'.repeat(HUGE_NAME_BYTES) });
    const s0 = storage.writeStats;
    const withHuge = await sample('after-huge');
    const s1 = storage.writeStats;
    return { without, with: withHuge, rows: (s1.rowsWritten - s0.rowsWritten) / (s1.changes - s0.changes) };
  } finally {
    await registry.stop();
    await storage.stop();
  }
}

function scaleTable(results: ScaleResult[]): BenchTable {
  return {
    caption:
      'One durable change (register or deregister, each awaited) with N instances registered; SQLite (WAL, ' +
      'synchronous=FULL) on the writer thread. "old design" = one whole-registry rewrite at that N, which the ' +
      'previous write path did synchronously on the event loop for every change.',
    columns: [
      'instances',
      'change p50',
      'change p99',
      'changes/s (one at a time)',
      `changes/s (${CONCURRENT_CHANGES} at once)`,
      'transactions for those',
      'rows written per change (instance + its name row)',
      'old design per change p50',
      `fill: ${'N'} at once`,
    ],
    rows: results.map((r) => {
      const latency = summarize(r.latency);
      return [
        String(r.population),
        formatMs(latency.p50),
        formatMs(latency.p99),
        formatRate(r.sequentialRate),
        formatRate(r.concurrentRate),
        String(r.concurrentTransactions),
        r.rowsPerChange.toFixed(2),
        formatMs(summarize(r.oldDesign).p50),
        r.population === 0 ? '-' : `${formatMs(r.fill.ms)} in ${r.fill.transactions} transactions`,
      ];
    }),
  };
}

export async function registryBenchmark(): Promise<BenchSection> {
  const dir = makeTempDir('berth-bench-reg-');
  const abort = new AbortController();
  // Every subscriber listens on this one signal.
  setMaxListeners(4 * SUBSCRIBERS, abort.signal);
  const cases: Case[] = [];
  try {
    const scales: ScaleResult[] = [];
    for (const population of SCALES) scales.push(await measureScale(dir.path, population));
    const loop = await measureLoopDelay(dir.path);
    const huge = await measureHugeName(dir.path);

    // Subscribers (memory storage, as the daemon's tests run; SQLite's fsync would hide the effect).
    // "9 readers" isolates what the one never-reading subscriber adds on top of the readers.
    const [s0, s1, s2, s3] = [
      createMemoryStorage(),
      createMemoryStorage(),
      createMemoryStorage(),
      createMemoryStorage(),
    ] as [RegistryStorage, RegistryStorage, RegistryStorage, RegistryStorage];
    const zero = await newCase('0 subscribers', createRegistry({ storage: s0 }), PAIRS_PER_ROUND, () =>
      s0.stop(),
    );
    const readersRegistry = createRegistry({ storage: s1 });
    const readers = addSubscribers(readersRegistry, SUBSCRIBERS - 1, 0, abort.signal);
    const readersCase = await newCase(
      `${SUBSCRIBERS - 1} subscribers, all reading`,
      readersRegistry,
      PAIRS_PER_ROUND,
      () => s1.stop(),
    );
    const tenRegistry = createRegistry({ storage: s2 });
    const ten = addSubscribers(tenRegistry, SUBSCRIBERS - 1, 1, abort.signal);
    const tenCase = await newCase(
      `${SUBSCRIBERS} subscribers, 1 never reads (unbounded queues)`,
      tenRegistry,
      PAIRS_PER_ROUND,
      () => s2.stop(),
    );
    const boundedRegistry = createRegistry({ storage: s3, subscriberQueueSize: 256 });
    const bounded = addSubscribers(boundedRegistry, SUBSCRIBERS - 1, 1, abort.signal);
    const boundedCase = await newCase(
      `${SUBSCRIBERS} subscribers, 1 never reads (queueSize 256, lags)`,
      boundedRegistry,
      PAIRS_PER_ROUND,
      () => s3.stop(),
    );
    const subscriberCases = [zero, readersCase, tenCase, boundedCase];
    cases.push(...subscriberCases);
    await measureCases(subscriberCases);

    // Prove the readers kept up and the stalled subscriber lost nothing (bounded: it is told it lagged).
    abort.abort();
    const seen = await Promise.all([...ten.drained, ...bounded.drained]);
    await Promise.all(readers.drained);
    const stalledUnbounded = await drainCount(ten.stalledIterators[0]);
    const firstBounded = await bounded.stalledIterators[0]?.next();
    const firstBoundedType = firstBounded?.done ? 'end of stream' : `'${firstBounded?.value.type}'`;

    const subscriberTable = tableFor(
      'Subscribers (memory storage); baseline = 0 subscribers. Compare the two "never reads" rows with ' +
        '"all reading" for the cost of the stalled subscriber alone.',
      subscriberCases,
    );
    const withHuge = summarize(huge.with);
    const withoutHuge = summarize(huge.without);
    return {
      title: 'Registry: durable changes at scale, event-loop delay, subscribers',
      method:
        `Scale: for each N in ${SCALES.join(', ')}, a fresh SQLite registry gets N instances in one burst, then ` +
        `${SEQUENTIAL_CHANGES} changes awaited one by one (register and deregister of a churn instance; latency ` +
        `= until the promise resolves, i.e. durable), then ${CONCURRENT_CHANGES} changes fired together. ` +
        `"old design" times putDynamicPluginRegistryState of the whole state at N (${OLD_DESIGN_SAMPLES} samples), ` +
        'the write the previous registry did on the event loop for every change. Event loop: ' +
        'perf_hooks.monitorEventLoopDelay (1 ms resolution) enabled for a burst of 5,000 concurrent ' +
        `registrations. Huge name: 100 awaited registrations of ordinary plugins before and after one plugin ` +
        `with a ${HUGE_NAME_BYTES / 1024 / 1024} MB name is registered. Subscribers: ${POPULATION} residents, ` +
        `awaited register+deregister pairs, ${ROUNDS} interleaved rounds of ${PAIRS_PER_ROUND} pairs.`,
      tables: [scaleTable(scales), subscriberTable],
      notes: [
        `Event-loop delay during a burst of ${loop.registrations} concurrent registrations (all durable after ` +
          `${formatMs(loop.ms)}, ${loop.transactions} transactions): p50 ${formatMs(loop.p50)}, p99 ` +
          `${formatMs(loop.p99)}, max ${formatMs(loop.max)}. Of that, the benchmark's own loop making the ` +
          `${loop.registrations} calls held the event loop for ${formatMs(loop.submitMs)} in one piece (in the ` +
          'daemon each registration arrives in its own callback), and the longest garbage-collection pause was ' +
          `${formatMs(loop.maxGcMs)}; the registry works in batches of at most ${REGISTRY_DEFAULTS.maxBatch}. ` +
          `The same monitor on the idle process just before: p99 ${formatMs(loop.idle.p99)}, max ` +
          `${formatMs(loop.idle.max)} (the shared machine's own scheduling noise).`,
        `With a ${HUGE_NAME_BYTES / 1024 / 1024} MB-named plugin registered, other registrations took p50 ` +
          `${formatMs(withHuge.p50)} / p99 ${formatMs(withHuge.p99)} (before it: p50 ${formatMs(withoutHuge.p50)} / ` +
          `p99 ${formatMs(withoutHuge.p99)}); ${huge.rows.toFixed(2)} rows written per change.`,
        `Every reader saw ${unique(seen.slice(0, ten.drained.length))} events (unbounded registry) and ` +
          `${unique(seen.slice(ten.drained.length))} (bounded); the subscriber that never read still held ` +
          `${stalledUnbounded} events when drained at the end (nothing dropped). The bounded stalled ` +
          `subscriber's first item was ${firstBoundedType} (told, not silently dropped).`,
        'The machine is shared with other jobs (2 cores); absolute times are noisy, the shape across N is the claim.',
      ],
    };
  } finally {
    abort.abort();
    for (const c of cases) {
      await c.registry.stop();
      await c.cleanup();
    }
    dir.remove();
  }
}
