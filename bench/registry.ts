/**
 * Registry throughput: registerPlugin + deregisterPlugin with no storage,
 * in-memory storage and SQLite storage (which persists the whole registry,
 * durably, on every change), and with 10 subscribers of which one never
 * reads. The claim under test: a subscriber that never reads does not slow
 * registration (each subscriber has its own queue).
 */
import { setMaxListeners } from 'node:events';
import type { PluginInstanceInfo, RegistryEvent } from '../src/common/index.js';
import { createRegistry, type Registry } from '../src/registry/index.js';
import { createMemoryStorage, openSqliteStorage, type StateStorage } from '../src/storage/index.js';
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
/** register+deregister pairs per case per round (SQLite: fsync per op, so fewer). */
const PAIRS_PER_ROUND = 100;
const SQLITE_PAIRS_PER_ROUND = 25;
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

function newCase(name: string, registry: Registry, pairsPerRound: number, cleanup: Case['cleanup']): Case {
  for (let i = 0; i < POPULATION; i++) registry.registerPlugin(instance(i, 'resident'));
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
    c.registry.registerPlugin(info);
    const t1 = nowMs();
    c.registry.deregisterPlugin(info.type, info.name, info.allocId);
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

export async function registryBenchmark(): Promise<BenchSection> {
  const dir = makeTempDir('berth-bench-reg-');
  const abort = new AbortController();
  // Every subscriber listens on this one signal.
  setMaxListeners(4 * SUBSCRIBERS, abort.signal);
  const cases: Case[] = [];
  try {
    // Storage kinds.
    const none = newCase('no storage', createRegistry(), PAIRS_PER_ROUND, () => {});
    const memoryStorage: StateStorage = createMemoryStorage();
    const memory = newCase(
      'memory storage',
      createRegistry({ storage: memoryStorage }),
      PAIRS_PER_ROUND,
      () => memoryStorage.close(),
    );
    const sqliteStorage = openSqliteStorage({ path: `${dir.path}/state.db` });
    const sqlite = newCase(
      'SQLite storage (WAL, synchronous=FULL)',
      createRegistry({ storage: sqliteStorage }),
      SQLITE_PAIRS_PER_ROUND,
      () => sqliteStorage.close(),
    );
    cases.push(none, memory, sqlite);
    await measureCases([none, memory, sqlite]);

    // Subscribers (memory storage, as the daemon's tests run; SQLite's fsync would hide the effect).
    // "9 readers" isolates what the one never-reading subscriber adds on top of the readers.
    const subStorages = [
      createMemoryStorage(),
      createMemoryStorage(),
      createMemoryStorage(),
      createMemoryStorage(),
    ];
    const [s0, s1, s2, s3] = subStorages as [StateStorage, StateStorage, StateStorage, StateStorage];
    const zero = newCase('0 subscribers', createRegistry({ storage: s0 }), PAIRS_PER_ROUND, () => s0.close());
    const readersRegistry = createRegistry({ storage: s1 });
    const readers = addSubscribers(readersRegistry, SUBSCRIBERS - 1, 0, abort.signal);
    const readersCase = newCase(
      `${SUBSCRIBERS - 1} subscribers, all reading`,
      readersRegistry,
      PAIRS_PER_ROUND,
      () => s1.close(),
    );
    const tenRegistry = createRegistry({ storage: s2 });
    const ten = addSubscribers(tenRegistry, SUBSCRIBERS - 1, 1, abort.signal);
    const tenCase = newCase(
      `${SUBSCRIBERS} subscribers, 1 never reads (unbounded queues)`,
      tenRegistry,
      PAIRS_PER_ROUND,
      () => s2.close(),
    );
    const boundedRegistry = createRegistry({ storage: s3, subscriberQueueSize: 256 });
    const bounded = addSubscribers(boundedRegistry, SUBSCRIBERS - 1, 1, abort.signal);
    const boundedCase = newCase(
      `${SUBSCRIBERS} subscribers, 1 never reads (queueSize 256, lags)`,
      boundedRegistry,
      PAIRS_PER_ROUND,
      () => s3.close(),
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

    const storageTable = tableFor(
      `Storage kinds: register+deregister of one instance while ${POPULATION} others stay registered; baseline = no storage.`,
      [none, memory, sqlite],
    );
    const subscriberTable = tableFor(
      'Subscribers (memory storage); baseline = 0 subscribers. Compare the two "never reads" rows with ' +
        '"all reading" for the cost of the stalled subscriber alone.',
      subscriberCases,
    );
    return {
      title: 'Registry: registerPlugin / deregisterPlugin',
      method:
        `Each case is its own registry holding ${POPULATION} resident plugins; one operation pair registers a ` +
        `new instance (cycling over ${CYCLE} names) and deregisters it. Warm-up, then ${ROUNDS} interleaved rounds ` +
        `(${PAIRS_PER_ROUND} pairs per round, ${SQLITE_PAIRS_PER_ROUND} for SQLite), yielding to the event loop ` +
        'every 10 pairs so subscribers drain. Each call is timed on its own (hrtime). "ops/s (calls)" counts ' +
        'only time inside registerPlugin/deregisterPlugin; "ops/s (wall)" includes the yields, i.e. the readers ' +
        'draining their queues. SQLite writes the whole registry in one durable transaction per change.',
      tables: [storageTable, subscriberTable],
      notes: [
        `Every reader saw ${unique(seen.slice(0, ten.drained.length))} events (unbounded registry) and ` +
          `${unique(seen.slice(ten.drained.length))} (bounded); the subscriber that never read still held ` +
          `${stalledUnbounded} events when drained at the end (nothing dropped). The bounded stalled ` +
          `subscriber's first item was ${firstBoundedType} (told, not silently dropped).`,
        '"ops/s (calls)" is total operations over total time in the calls, so unlike the p50 it carries every ' +
          'garbage-collection pause and scheduling hiccup of the shared machine that landed inside a call.',
        `Mean SQLite write per change: ${formatMs(summarize(sqlite.register).mean)} (fsync on ext4 per commit).`,
      ],
    };
  } finally {
    abort.abort();
    for (const c of cases) {
      c.registry.shutdown();
      await c.cleanup();
    }
    dir.remove();
  }
}
