import type { Etcd3 } from 'etcd3';
import {
  type ClusterEvent,
  type ClusterReader,
  clusterKeys,
  replayEvents,
  stripNode,
  stripPlugin,
} from '../../cluster/index.js';
import { waitFor } from '../wait-for.js';

/** Records every event a reader emits, from now on. */
export function recordClusterEvents(reader: ClusterReader): { events: ClusterEvent[]; stop: () => void } {
  const events: ClusterEvent[] = [];
  const stop = reader.onEvent((event) => events.push(event));
  return { events, stop };
}

interface RawEntry {
  value: string;
  modRevision: string;
  lease: string;
}

/** A raw, linearizable read of everything under the root prefix: the ground truth. */
export async function readPrefix(
  client: Etcd3,
  root: string,
): Promise<{ revision: string; kvs: Map<string, RawEntry> }> {
  const response = await client.getAll().prefix(root).exec();
  const kvs = new Map<string, RawEntry>();
  for (const kv of response.kvs) {
    kvs.set(kv.key.toString(), { value: kv.value.toString(), modRevision: kv.mod_revision, lease: kv.lease });
  }
  return { revision: response.header.revision, kvs };
}

/**
 * The four invariants every cluster scenario ends with:
 * (a) the reader's view equals a raw prefix read of etcd (waited for: the reader may lag);
 * (b) replaying the event log gives the reader's visible view;
 * (c) per key, reported mod revisions strictly increase, and "added" never repeats without a "removed";
 * (d) every plugin key's lease equals its node key's lease (and its node key exists).
 * Throws an Error naming the first violation.
 */
export async function checkClusterInvariants(options: {
  client: Etcd3;
  reader: ClusterReader;
  events: readonly ClusterEvent[];
  root?: string;
  timeoutMs?: number;
}): Promise<void> {
  const root = options.root ?? '/berth/v1/';
  const keys = clusterKeys(root);
  const { reader } = options;

  // (a) Wait until the reader has caught up with a raw read and both agree key by key.
  let lastDiff = '';
  const truth = await waitFor(
    'the reader view to equal a raw prefix read',
    async () => {
      const raw = await readPrefix(options.client, root);
      const mine = reader.rawKeys();
      lastDiff = diffRaw(raw.kvs, mine);
      return lastDiff === '' ? raw : undefined;
    },
    { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 50 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${lastDiff}`);
  });

  // (b) Replay.
  const replayed = replayEvents(options.events);
  const viewNodes = new Map(reader.nodes().map((n) => [n.key, JSON.stringify(sorted(stripNode(n)))]));
  const viewPlugins = new Map(reader.plugins().map((p) => [p.key, JSON.stringify(sorted(stripPlugin(p)))]));
  const replayNodes = new Map(
    [...replayed.nodes].map(([k, v]) => [k, JSON.stringify(sorted(JSON.parse(v)))]),
  );
  const replayPlugins = new Map(
    [...replayed.plugins].map(([k, v]) => [k, JSON.stringify(sorted(JSON.parse(v)))]),
  );
  assertSameMap('replayed nodes vs view', replayNodes, viewNodes);
  assertSameMap('replayed plugins vs view', replayPlugins, viewPlugins);

  // (c) Per key: strictly increasing mod revisions; added only when absent.
  const lastRevision = new Map<string, bigint>();
  const present = new Set<string>();
  for (const event of options.events) {
    let key: string | undefined;
    let revision: bigint | undefined;
    let kind: 'added' | 'updated' | 'removed' | undefined;
    if (event.type === 'node-added' || event.type === 'node-updated' || event.type === 'node-removed') {
      key = event.node.key;
      revision = BigInt(event.node.modRevision);
      kind = event.type.slice(5) as 'added' | 'updated' | 'removed';
    } else if (
      event.type === 'plugin-added' ||
      event.type === 'plugin-updated' ||
      event.type === 'plugin-removed'
    ) {
      key = event.plugin.key;
      revision = BigInt(event.plugin.modRevision);
      kind = event.type.slice(7) as 'added' | 'updated' | 'removed';
    }
    if (key === undefined || revision === undefined || kind === undefined) continue;
    if (kind === 'added') {
      if (present.has(key)) throw new Error(`duplicate added for ${key} at revision ${event.revision}`);
      present.add(key);
    } else if (kind === 'removed') {
      if (!present.delete(key))
        throw new Error(`removed without added for ${key} at revision ${event.revision}`);
      continue; // a removal reports the last value's revision
    } else if (!present.has(key)) {
      throw new Error(`updated without added for ${key} at revision ${event.revision}`);
    }
    const before = lastRevision.get(key);
    if (before !== undefined && revision <= before) {
      throw new Error(`mod revision of ${key} went from ${before} to ${revision}`);
    }
    lastRevision.set(key, revision);
  }

  // (d) Leases.
  for (const [key, entry] of truth.kvs) {
    const parsed = keys.parse(key);
    if (parsed?.kind !== 'plugin') continue;
    const node = truth.kvs.get(keys.nodeKey(parsed.node));
    if (node === undefined) throw new Error(`plugin key ${key} exists without its node key`);
    if (node.lease !== entry.lease) {
      throw new Error(`plugin key ${key} has lease ${entry.lease}, its node key ${node.lease}`);
    }
  }
}

function diffRaw(truth: Map<string, RawEntry>, mine: Map<string, RawEntry & { key: string }>): string {
  for (const [key, entry] of truth) {
    const have = mine.get(key);
    if (have === undefined) return `reader lacks ${key}`;
    if (have.value !== entry.value || have.modRevision !== entry.modRevision || have.lease !== entry.lease) {
      return `reader has ${key} at revision ${have.modRevision} lease ${have.lease}, etcd at ${entry.modRevision} lease ${entry.lease}`;
    }
  }
  for (const key of mine.keys()) if (!truth.has(key)) return `reader still has ${key}`;
  return '';
}

function assertSameMap(what: string, expected: Map<string, string>, actual: Map<string, string>): void {
  for (const [key, value] of expected) {
    const have = actual.get(key);
    if (have === undefined) throw new Error(`${what}: view lacks ${key}`);
    if (have !== value) throw new Error(`${what}: ${key} differs: replay ${value}, view ${have}`);
  }
  for (const key of actual.keys()) if (!expected.has(key)) throw new Error(`${what}: replay lacks ${key}`);
}

function sorted(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sorted);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sorted(v)]),
  );
}
