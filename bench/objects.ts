/**
 * Object manager reads: a direct source GET (the baseline) against the TTL
 * store's hit path, the TTL store with an expired TTL (every read refetches),
 * the watch store's hit path, and the three strategies of the secret manager
 * as the daemon builds them. Besides latency it counts what each read costs
 * the source: gets, lists and watches per 1000 reads, from a countingSource
 * wrapped around the real source.
 */
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { systemClock } from '../src/common/index.js';
import {
  type ChangeDetectionStrategy,
  createDirectorySource,
  createMemorySource,
  createObjectManagers,
  createTtlStore,
  createWatchStore,
  type KubeObject,
  type ObjectManagers,
  type ObjectSource,
  type Pod,
  type WatchStore,
} from '../src/objects/index.js';
import { type CountingSource, countingSource } from '../src/testing/index.js';
import { type BenchSection, type BenchTable, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { interleave, makeTempDir, nowMs } from './lib/timing.js';

const NAMESPACE = 'bench';
const OBJECTS = 100;
const WARMUP_BATCHES = 20;
/** Each sample is one batch: one awaited read of each of the OBJECTS objects, in sequence. */
const BATCHES = 1000;

const names = Array.from({ length: OBJECTS }, (_, i) => `secret-${i}`);

function secretObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: NAMESPACE, name },
    type: 'Opaque',
    data: {
      username: Buffer.from(`user-${name}`).toString('base64'),
      password: 'cGFzc3dvcmQtMTIzNDU2Nzg5MA==',
    },
  };
}

function podReferencingAll(): Pod {
  return {
    metadata: { namespace: NAMESPACE, name: 'bench-pod', uid: 'bench-pod-uid' },
    spec: { volumes: names.map((name) => ({ name: `vol-${name}`, secret: { secretName: name } })) },
  };
}

interface ReadCase {
  name: string;
  /** The counting wrapper this case reads through (its own, so its counts are its own). */
  source: CountingSource;
  read: (name: string) => Promise<KubeObject>;
  samples: number[];
  reads: number;
  setupCalls: string;
}

async function runBatch(c: ReadCase, record: boolean): Promise<void> {
  const t0 = nowMs();
  for (const name of names) {
    const object = await c.read(name);
    if (object.metadata.name !== name)
      throw new Error(`${c.name}: read ${name}, got ${object.metadata.name}`);
  }
  const perRead = (nowMs() - t0) / names.length;
  if (record) {
    c.samples.push(perRead);
    c.reads += names.length;
  }
}

function callsPer1000(c: ReadCase): string {
  const per = (count: number) => String(Math.round((count * 10_000) / c.reads) / 10);
  return `${per(c.source.count('get'))} / ${per(c.source.count('list'))} / ${per(c.source.count('watch'))}`;
}

interface Built {
  cases: ReadCase[];
  close: () => Promise<void>;
}

/** Every read path over one real source. */
async function buildCases(label: string, inner: ObjectSource): Promise<Built> {
  const cases: ReadCase[] = [];
  const stores: WatchStore[] = [];
  const managers: ObjectManagers[] = [];
  const add = (name: string, source: CountingSource, read: ReadCase['read']) => {
    const c: ReadCase = { name: `${label}: ${name}`, source, read, samples: [], reads: 0, setupCalls: '' };
    cases.push(c);
    return c;
  };

  const direct = countingSource(inner);
  add('direct source.get (baseline)', direct, (name) => direct.get('secrets', NAMESPACE, name));

  for (const [caseName, ttlMs] of [
    ['TTL store, hit (TTL 60 s)', 60_000],
    ['TTL store, expired (TTL 0: every read refetches)', 0],
  ] as const) {
    const source = countingSource(inner);
    const store = createTtlStore({
      getObject: (namespace, name, options) => source.get('secrets', namespace, name, options),
      clock: systemClock,
      defaultTtlMs: ttlMs,
    });
    for (const name of names) store.addReference(NAMESPACE, name, 'bench-pod-uid');
    add(caseName, source, (name) => store.get(NAMESPACE, name));
  }

  const watchSource = countingSource(inner);
  const watchStore = createWatchStore({
    source: watchSource,
    resource: 'secrets',
    clock: systemClock,
    maxIdleTimeMs: 3_600_000,
  });
  stores.push(watchStore);
  for (const name of names) watchStore.addReference(NAMESPACE, name, 'bench-pod-uid');
  add('watch store, hit', watchSource, (name) => watchStore.get(NAMESPACE, name));

  for (const strategy of ['Get', 'Cache', 'Watch'] as ChangeDetectionStrategy[]) {
    const source = countingSource(inner);
    const objectManagers = createObjectManagers({ strategy, source, ttlMs: 60_000 });
    managers.push(objectManagers);
    objectManagers.registerPod(podReferencingAll());
    add(`secret manager, strategy ${strategy}`, source, (name) =>
      objectManagers.secrets.getSecret(NAMESPACE, name),
    );
  }

  return {
    cases,
    close: async () => {
      for (const store of stores) await store.stop();
      for (const m of managers) await m.stop();
    },
  };
}

async function measure(cases: ReadCase[]): Promise<void> {
  for (const c of cases) {
    // The first batch fills caches and opens watches; what that cost is reported separately.
    for (let i = 0; i < WARMUP_BATCHES; i++) await runBatch(c, false);
    c.setupCalls = `${c.source.count('get')} / ${c.source.count('list')} / ${c.source.count('watch')}`;
    c.source.reset();
  }
  await interleave(
    BATCHES,
    cases.map((c) => () => runBatch(c, true)),
  );
}

function table(caption: string, cases: ReadCase[]): BenchTable {
  const [baseline] = cases;
  if (baseline === undefined) throw new Error('no cases');
  const base = summarize(baseline.samples);
  return {
    caption,
    columns: [...LATENCY_COLUMNS, 'source get / list / watch per 1000 reads', 'warm-up get / list / watch'],
    rows: cases.map((c) => {
      const s = summarize(c.samples);
      return [...latencyRow(c.name, s, c === baseline ? undefined : base), callsPer1000(c), c.setupCalls];
    }),
  };
}

export async function objectsBenchmark(): Promise<BenchSection> {
  const dir = makeTempDir('berth-bench-obj-');
  const closers: Array<() => Promise<void>> = [];
  try {
    const memory = createMemorySource();
    closers.push(() => memory.stop());
    for (const name of names) memory.put('secrets', secretObject(name));

    await mkdir(`${dir.path}/secrets/${NAMESPACE}`, { recursive: true });
    for (const name of names) {
      writeFileSync(`${dir.path}/secrets/${NAMESPACE}/${name}.json`, JSON.stringify(secretObject(name)));
    }
    const directory = createDirectorySource({ root: dir.path, rescanIntervalMs: 3_600_000 });
    closers.push(() => directory.stop());
    await directory.ready();

    const memoryCases = await buildCases('memory', memory);
    closers.push(memoryCases.close);
    const directoryCases = await buildCases('directory', directory);
    closers.push(directoryCases.close);

    await measure(memoryCases.cases);
    await measure(directoryCases.cases);

    return {
      title: 'Object manager: read latency and source load',
      method:
        `${OBJECTS} secrets, all referenced by one pod. One sample = the mean of ${OBJECTS} sequential awaited ` +
        `reads (one per secret), so percentiles are over ${BATCHES} batch means per case; ${WARMUP_BATCHES} warm-up ` +
        'batches first (they fill the caches and open the watches), then every case of a source runs one batch ' +
        'per round, interleaved. Source calls are counted by a countingSource wrapped around the real source, ' +
        'per case, during the measured rounds; the warm-up column shows what filling the cache cost.',
      tables: [
        table(
          'Memory source (in-process, structuredClone per get); baseline = direct source.get.',
          memoryCases.cases,
        ),
        table(
          'Directory source (files under a temp dir, served from its in-memory index); baseline = direct source.get.',
          directoryCases.cases,
        ),
      ],
      notes: [
        'TTL hit and watch hit serve the cached object without touching the source (0 source calls per 1000 ' +
          'reads while the TTL holds / the watch stays open); the expired-TTL row is the miss path (one GET per read).',
        'Strategy Get is a read-through (one GET per read); Cache is the TTL store behind the manager; Watch ' +
          'opens one list + one watch per referenced object once, then serves from the watch cache.',
      ],
    };
  } finally {
    for (const close of closers.reverse()) await close();
    dir.remove();
  }
}
