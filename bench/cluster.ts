/**
 * The cluster view at fleet scale: 100 simulated nodes × 50 plugins against
 * one real etcd 3.4 on loopback. Each node is an in-process cluster writer fed
 * by its own real registry; one reader watches the whole fleet. Measures
 * publish latency (local registration → the reader's event), reader catch-up
 * (a cold list of the fleet, and a re-list after compaction while behind), and
 * write amplification (etcd writes and revisions per local change).
 *
 *   node dist/bench/cluster.js     runs it alone and replaces its section in bench/results.md
 *   BERTH_BENCH_CLUSTER=1 node dist/bench/run-all.js   includes it in a full run
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEtcdClient } from '../src/cluster/etcd.js';
import {
  type ClusterEvent,
  ClusterReader,
  ClusterWriter,
  registryPluginSource,
} from '../src/cluster/index.js';
import type { PluginInstanceInfo } from '../src/common/index.js';
import { createRegistry, type Registry } from '../src/registry/index.js';
import { startEtcdServer, startPausableProxy } from '../src/testing/harness/index.js';
import { waitFor } from '../src/testing/index.js';
import { type BenchSection, LATENCY_COLUMNS, latencyRow, markdownTable } from './lib/report.js';
import { formatMs, summarize } from './lib/stats.js';
import { nowMs } from './lib/timing.js';

const NODES = Number(process.env.BENCH_NODES ?? 100);
const PLUGINS_PER_NODE = 50;
const CHANGES = 400;
const BEHIND_CHANGES = 500;
/** Writers share this many etcd connections (a real fleet has one per daemon; the loopback cost is the same). */
const CLIENTS = 10;

function plugin(node: number, index: number, health = 'healthy'): PluginInstanceInfo {
  const socketPath = `/var/lib/berth/plugins_registry/csi-${index}.sock`;
  return {
    type: 'CSIPlugin',
    name: `csi-${index}.example.com`,
    version: '1.0.0',
    connectionInfo: { socketPath },
    allocId: socketPath,
    options: { versions: '1.0.0', nodeId: `node-${node}`, health },
  };
}

export async function clusterBenchmark(): Promise<BenchSection> {
  const etcd = await startEtcdServer({ watchProgressNotifyIntervalMs: 5_000 });
  const clients = Array.from({ length: CLIENTS }, () => createEtcdClient({ endpoints: [etcd.endpoint] }));
  const admin = createEtcdClient({ endpoints: [etcd.endpoint] });
  const proxy = await startPausableProxy({ host: '127.0.0.1', port: Number(new URL(etcd.endpoint).port) });
  const registries: Registry[] = [];
  const writers: ClusterWriter[] = [];
  let puts = 0;
  let deletes = 0;
  const reader = new ClusterReader({
    client: createEtcdClient({ endpoints: [etcd.endpoint] }),
    ownsClient: true,
  });
  const behind = new ClusterReader({
    client: createEtcdClient({ endpoints: [proxy.endpoint] }),
    ownsClient: true,
    staleAfterMs: 600_000,
  });
  try {
    await reader.start();
    await reader.synced();
    await behind.start();
    await behind.synced();
    const waiting = new Map<string, () => void>();
    reader.onEvent((event: ClusterEvent) => {
      if (
        event.type === 'plugin-added' ||
        event.type === 'plugin-updated' ||
        event.type === 'plugin-removed'
      ) {
        waiting.get(`${event.plugin.node}|${event.plugin.name}`)?.();
      }
    });

    // Fleet start: every node publishes its 50 plugins (one lease grant + one transaction each).
    const fleetStart = nowMs();
    for (let n = 0; n < NODES; n++) {
      const registry = createRegistry();
      await Promise.all(
        Array.from({ length: PLUGINS_PER_NODE }, (_, i) => registry.registerPlugin(plugin(n, i))),
      );
      registries.push(registry);
      const writer = new ClusterWriter({
        client: clients[n % CLIENTS] as (typeof clients)[number],
        source: registryPluginSource(registry),
        nodeName: `node-${String(n).padStart(3, '0')}`,
        leaseTtlSeconds: 15,
        onEvent: (event) => {
          if (event.type === 'published') {
            puts += event.puts;
            deletes += event.deletes;
          }
        },
      });
      writers.push(writer);
      await writer.start();
    }
    await waitFor('the fleet in the reader', () => reader.plugins().length === NODES * PLUGINS_PER_NODE, {
      timeoutMs: 120_000,
      intervalMs: 20,
    });
    const fleetMs = nowMs() - fleetStart;
    progress(`fleet of ${NODES} nodes visible after ${formatMs(fleetMs)}`);
    await waitFor('the lagging reader synced', () => behind.plugins().length === NODES * PLUGINS_PER_NODE, {
      timeoutMs: 120_000,
    });

    // Publish latency: one local change at a time (a health flip through the registry), timed to the reader's event.
    const before = { puts, deletes, revision: await revision(admin) };
    const latencies: number[] = [];
    // Each round flips one plugin's health and back: two real local changes, each timed.
    for (let c = 0; c < CHANGES / 2; c++) {
      const n = (c * 37) % NODES;
      const i = (c * 11) % PLUGINS_PER_NODE;
      const node = `node-${String(n).padStart(3, '0')}`;
      for (const health of ['unhealthy', 'healthy']) {
        const seen = new Promise<void>((resolve) => waiting.set(`${node}|csi-${i}.example.com`, resolve));
        const t0 = nowMs();
        (registries[n] as Registry).registerPlugin(plugin(n, i, health));
        await seen;
        latencies.push(nowMs() - t0);
        waiting.clear();
      }
    }
    const localChanges = latencies.length;
    await waitFor('writers idle', () => writers.every((w) => w.inSync), { timeoutMs: 60_000 });
    const afterRevision = await revision(admin);
    const writesPerChange = (puts - before.puts + deletes - before.deletes) / localChanges;
    const revisionsPerChange = Number(BigInt(afterRevision) - BigInt(before.revision)) / localChanges;

    progress(`${latencies.length} changes timed`);
    // Reader catch-up, cold: a new reader lists the whole fleet (pages of 500 at one revision).
    const coldStart = nowMs();
    const cold = new ClusterReader({
      client: createEtcdClient({ endpoints: [etcd.endpoint] }),
      ownsClient: true,
    });
    await cold.start();
    await cold.synced();
    const coldMs = nowMs() - coldStart;
    const coldKeys = cold.rawKeys().size;
    await cold.stop();

    // Reader catch-up after a re-list: the lagging reader is cut off, 500 changes happen on 100 nodes,
    // etcd compacts, the link heals; the watch is cancelled as compacted, the reader re-lists and diffs.
    progress('cold list done');
    proxy.partition();
    for (let c = 0; c < BEHIND_CHANGES; c++) {
      const n = c % NODES;
      (registries[n] as Registry).registerPlugin(plugin(n, (c * 7) % PLUGINS_PER_NODE, `v${c}`));
    }
    await waitFor('writers idle', () => writers.every((w) => w.inSync), { timeoutMs: 60_000 });
    const compactAt = await revision(admin);
    await admin.kv.compact({ revision: compactAt, physical: true });
    let relistDiff = 0;
    let relisted = false;
    behind.onEvent((event) => {
      if (event.type === 'relisted') relisted = true;
      else if (relisted && event.type === 'plugin-updated') relistDiff++;
    });
    const healAt = nowMs();
    proxy.heal();
    await waitFor(
      'the lagging reader re-listed',
      () => relisted && BigInt(behind.status.revision) >= BigInt(compactAt),
      {
        timeoutMs: 120_000,
        intervalMs: 2,
      },
    );
    const relistMs = nowMs() - healAt;

    progress('re-list done');
    const summary = summarize(latencies);
    return {
      title: `Cluster view on etcd (${NODES} nodes × ${PLUGINS_PER_NODE} plugins)`,
      method:
        `One etcd 3.4 member on loopback (progress notifications every 5 s). ${NODES} in-process cluster writers, ` +
        `each with its own real registry of ${PLUGINS_PER_NODE} plugins, own lease (TTL 15 s) and node key, ` +
        `sharing ${CLIENTS} etcd connections; one reader watches the whole prefix. Publish latency: ${CHANGES} ` +
        'health changes (flip and flip back), one at a time, each timed from registry.registerPlugin (the local change) to the ' +
        "reader's plugin-updated event (registry event → writer transaction → etcd → watch → reader diff). " +
        'Write amplification: keys written by the writers and etcd revisions, per local change, over those flips ' +
        `and the flips back (${localChanges} changes). Catch-up: a new reader's paged list of the whole fleet, and a ` +
        `reader cut off (TCP proxy) while ${BEHIND_CHANGES} changes happen, etcd compacts, and the link heals.`,
      tables: [
        {
          caption: 'Publish latency: local registration → reader event',
          columns: LATENCY_COLUMNS,
          rows: [latencyRow(`health change on one of ${NODES} nodes`, summary)],
        },
        {
          caption: 'Fleet start, catch-up and write amplification',
          columns: ['measure', 'value'],
          rows: [
            [
              `fleet start: ${NODES} writers publish ${NODES * PLUGINS_PER_NODE} plugins, until the reader has all`,
              formatMs(fleetMs),
            ],
            [`cold list by a new reader (${coldKeys} keys, pages of 500, one revision)`, formatMs(coldMs)],
            [
              `re-list after compaction, ${BEHIND_CHANGES} changes behind (heal → view current; ${relistDiff} updates emitted)`,
              formatMs(relistMs),
            ],
            ['keys written per local change', writesPerChange.toFixed(2)],
            ['etcd revisions per local change', revisionsPerChange.toFixed(2)],
          ],
        },
      ],
      notes: [
        'Publishing is on change only: renewals cost no revision, so an idle fleet writes nothing.',
        'A re-list emits only differences: the lagging reader reported one update per changed plugin, none for the rest.',
      ],
    };
  } finally {
    await Promise.allSettled(writers.map((w) => w.stop()));
    await Promise.all(registries.map((registry) => registry.stop()));
    await reader.stop();
    await behind.stop();
    for (const client of clients) client.close();
    admin.close();
    await proxy.close();
    await etcd.stop();
  }
}

function progress(text: string): void {
  console.error(`cluster bench: ${text}`);
}

async function revision(client: ReturnType<typeof createEtcdClient>): Promise<string> {
  const response = await client.kv.range({ key: Buffer.from('/'), count_only: true });
  return response.header.revision;
}

/** Run alone: print the section and put it in bench/results.md in place of an older one. */
async function main(): Promise<void> {
  const started = nowMs();
  const section = await clusterBenchmark();
  const seconds = (nowMs() - started) / 1000;
  const parts = [`## ${section.title}`, '', section.method, ''];
  for (const table of section.tables)
    parts.push(`_${table.caption}_`, '', markdownTable(table.columns, table.rows), '');
  parts.push(
    ...section.notes.map((note) => `- ${note}`),
    '',
    `_Took ${seconds.toFixed(1)} s (run alone: \`node dist/bench/cluster.js\`)._`,
    '',
  );
  const text = parts.join('\n');
  console.log(text);
  const target = fileURLToPath(new URL('../../bench/results.md', import.meta.url));
  if (!existsSync(target)) return;
  const current = readFileSync(target, 'utf8');
  const start = current.indexOf(`## ${section.title}`);
  let next = start < 0 ? -1 : current.indexOf('\n## ', start + 3);
  if (next >= 0) next += 1;
  const updated =
    start < 0
      ? `${current.trimEnd()}\n\n${text}`
      : `${current.slice(0, start)}${text}${next < 0 ? '' : `\n${current.slice(next)}`}`;
  writeFileSync(target, updated);
  console.log(`updated ${join('bench', 'results.md')}`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
