import type { ClusterEvent, ClusterNode, ClusterPlugin } from './cluster-events.js';
import type { ClusterKeys } from './cluster-keys.js';
import { decodeRecord, encodeRecord, type NodeRecord, type PluginRecord } from './cluster-values.js';

/** One raw key as etcd has it. */
export interface RawKey {
  key: string;
  value: string;
  modRevision: string;
  lease: string;
}

/**
 * The reader's copy of the prefix (every raw key) and the view derived from
 * it: nodes, and plugins whose node key exists. Changes are applied in
 * batches (one watch response, or a whole re-list); a batch returns the
 * events of the visible differences, so a same-value re-put (a restart's
 * adoption) or a lease move gives none, and a plugin whose node key is gone
 * disappears with it.
 */
export class ClusterState {
  readonly #keys: ClusterKeys;
  readonly #raw = new Map<string, RawKey>();
  /** node name → plugin keys of that node (present in #raw). */
  readonly #byNode = new Map<string, Set<string>>();

  constructor(keys: ClusterKeys) {
    this.#keys = keys;
  }

  get size(): number {
    return this.#raw.size;
  }

  raw(): Map<string, RawKey> {
    return new Map(this.#raw);
  }

  /** Applies puts and deletes (a watch response); stale events (mod revision not newer) are ignored. */
  applyChanges(
    changes: Array<{ kind: 'put'; kv: RawKey } | { kind: 'delete'; key: string; modRevision: string }>,
    revision: string,
  ): ClusterEvent[] {
    const affected = new Set<string>();
    for (const change of changes) {
      const key = change.kind === 'put' ? change.kv.key : change.key;
      this.#addAffected(key, affected);
    }
    const before = this.#visibleOf(affected);
    for (const change of changes) {
      if (change.kind === 'put') {
        const have = this.#raw.get(change.kv.key);
        if (have !== undefined && BigInt(have.modRevision) >= BigInt(change.kv.modRevision)) continue;
        this.#set(change.kv);
      } else {
        const have = this.#raw.get(change.key);
        if (have === undefined || BigInt(have.modRevision) >= BigInt(change.modRevision)) continue;
        this.#delete(change.key);
      }
    }
    for (const change of changes) {
      const key = change.kind === 'put' ? change.kv.key : change.key;
      this.#addAffected(key, affected);
    }
    return this.#diff(before, this.#visibleOf(affected), revision);
  }

  /** Replaces everything with a fresh list; returns only the differences. */
  replaceAll(kvs: RawKey[], revision: string): ClusterEvent[] {
    const affected = new Set<string>([...this.#raw.keys(), ...kvs.map((kv) => kv.key)]);
    const before = this.#visibleOf(affected);
    this.#raw.clear();
    this.#byNode.clear();
    for (const kv of kvs) this.#set(kv);
    return this.#diff(before, this.#visibleOf(affected), revision);
  }

  nodes(): ClusterNode[] {
    const nodes: ClusterNode[] = [];
    for (const raw of this.#raw.values()) {
      const parsed = this.#keys.parse(raw.key);
      if (parsed?.kind !== 'node') continue;
      const node = toNode(raw);
      if (node !== undefined) nodes.push(node);
    }
    return nodes.sort((a, b) => compare(a.node, b.node));
  }

  plugins(): ClusterPlugin[] {
    const plugins: ClusterPlugin[] = [];
    for (const raw of this.#raw.values()) {
      const plugin = this.#visiblePlugin(raw.key);
      if (plugin !== undefined) plugins.push(plugin);
    }
    return plugins.sort((a, b) => compare(a.key, b.key));
  }

  #set(kv: RawKey): void {
    this.#raw.set(kv.key, kv);
    const parsed = this.#keys.parse(kv.key);
    if (parsed?.kind === 'plugin') {
      let set = this.#byNode.get(parsed.node);
      if (set === undefined) {
        set = new Set();
        this.#byNode.set(parsed.node, set);
      }
      set.add(kv.key);
    }
  }

  #delete(key: string): void {
    this.#raw.delete(key);
    const parsed = this.#keys.parse(key);
    if (parsed?.kind === 'plugin') this.#byNode.get(parsed.node)?.delete(key);
  }

  /** A node key change affects every plugin of that node (their visibility hangs on it). */
  #addAffected(key: string, affected: Set<string>): void {
    affected.add(key);
    const parsed = this.#keys.parse(key);
    if (parsed?.kind === 'node')
      for (const pluginKey of this.#byNode.get(parsed.node) ?? []) affected.add(pluginKey);
  }

  #visibleOf(
    keys: Set<string>,
  ): Map<string, { value: string; item: ClusterNode | ClusterPlugin; kind: 'node' | 'plugin' }> {
    const visible = new Map<
      string,
      { value: string; item: ClusterNode | ClusterPlugin; kind: 'node' | 'plugin' }
    >();
    for (const key of keys) {
      const raw = this.#raw.get(key);
      if (raw === undefined) continue;
      const parsed = this.#keys.parse(key);
      if (parsed?.kind === 'node') {
        const node = toNode(raw);
        if (node !== undefined) visible.set(key, { value: raw.value, item: node, kind: 'node' });
      } else if (parsed?.kind === 'plugin') {
        const plugin = this.#visiblePlugin(key);
        if (plugin !== undefined) visible.set(key, { value: raw.value, item: plugin, kind: 'plugin' });
      }
    }
    return visible;
  }

  #visiblePlugin(key: string): ClusterPlugin | undefined {
    const raw = this.#raw.get(key);
    const parsed = this.#keys.parse(key);
    if (raw === undefined || parsed?.kind !== 'plugin') return undefined;
    const nodeRaw = this.#raw.get(this.#keys.nodeKey(parsed.node));
    if (nodeRaw === undefined || toNode(nodeRaw) === undefined) return undefined;
    const record = decodeRecord<PluginRecord>(raw.value);
    if (record === undefined) return undefined;
    return {
      ...record,
      node: parsed.node,
      type: parsed.type,
      name: parsed.name,
      key,
      modRevision: raw.modRevision,
      lease: raw.lease,
    };
  }

  #diff(
    before: Map<string, { value: string; item: ClusterNode | ClusterPlugin; kind: 'node' | 'plugin' }>,
    after: Map<string, { value: string; item: ClusterNode | ClusterPlugin; kind: 'node' | 'plugin' }>,
    revision: string,
  ): ClusterEvent[] {
    const events: ClusterEvent[] = [];
    // Nodes first when appearing, last when vanishing, so a replay never shows a plugin without its node.
    const keys = [...new Set([...before.keys(), ...after.keys()])].sort(compare);
    const added: ClusterEvent[] = [];
    const changed: ClusterEvent[] = [];
    const removed: ClusterEvent[] = [];
    for (const key of keys) {
      const was = before.get(key);
      const now = after.get(key);
      if (was === undefined && now !== undefined) {
        added.push(
          now.kind === 'node'
            ? { type: 'node-added', revision, node: now.item as ClusterNode }
            : { type: 'plugin-added', revision, plugin: now.item as ClusterPlugin },
        );
      } else if (was !== undefined && now === undefined) {
        removed.push(
          was.kind === 'node'
            ? { type: 'node-removed', revision, node: was.item as ClusterNode }
            : { type: 'plugin-removed', revision, plugin: was.item as ClusterPlugin },
        );
      } else if (was !== undefined && now !== undefined && was.value !== now.value) {
        changed.push(
          now.kind === 'node'
            ? {
                type: 'node-updated',
                revision,
                node: now.item as ClusterNode,
                previous: was.item as ClusterNode,
              }
            : {
                type: 'plugin-updated',
                revision,
                plugin: now.item as ClusterPlugin,
                previous: was.item as ClusterPlugin,
              },
        );
      }
    }
    const nodesFirst = (a: ClusterEvent, b: ClusterEvent) =>
      Number(a.type.startsWith('plugin')) - Number(b.type.startsWith('plugin'));
    const nodesLast = (a: ClusterEvent, b: ClusterEvent) => -nodesFirst(a, b);
    events.push(...added.sort(nodesFirst), ...changed, ...removed.sort(nodesLast));
    return events;
  }
}

function toNode(raw: RawKey): ClusterNode | undefined {
  const record = decodeRecord<NodeRecord>(raw.value);
  if (record === undefined) return undefined;
  return { ...record, key: raw.key, modRevision: raw.modRevision };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rebuilds a view from an event log (the checker's replay). */
export function replayEvents(events: readonly ClusterEvent[]): {
  nodes: Map<string, string>;
  plugins: Map<string, string>;
} {
  const nodes = new Map<string, string>();
  const plugins = new Map<string, string>();
  for (const event of events) {
    switch (event.type) {
      case 'node-added':
      case 'node-updated':
        nodes.set(event.node.key, encodeRecord(stripNode(event.node)));
        break;
      case 'node-removed':
        nodes.delete(event.node.key);
        break;
      case 'plugin-added':
      case 'plugin-updated':
        plugins.set(event.plugin.key, encodeRecord(stripPlugin(event.plugin)));
        break;
      case 'plugin-removed':
        plugins.delete(event.plugin.key);
        break;
      default:
        break;
    }
  }
  return { nodes, plugins };
}

/** The record part of a view entry (without key, revision and lease), for comparisons. */
export function stripNode(node: ClusterNode): NodeRecord {
  const { key: _k, modRevision: _m, ...record } = node;
  return record;
}

export function stripPlugin(plugin: ClusterPlugin): PluginRecord {
  const { key: _k, modRevision: _m, lease: _l, ...record } = plugin;
  return record;
}
