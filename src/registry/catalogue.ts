import { BerthError, type PluginInstanceInfo, type RegistryEvent } from '../common/index.js';
import type { RegistryChange, RegistryState } from '../storage/index.js';
import { copyInfo, sameDefinition } from './instance-info.js';

export interface InstanceKey {
  type: string;
  name: string;
  allocId: string;
}

export type ChangeEvent = Extract<RegistryEvent, { type: 'registered' | 'updated' | 'deregistered' }>;

export interface Settle {
  /** When the change was asked for (stamps registeredAt and the event). */
  at: number;
  resolve(): void;
  reject(error: unknown): void;
}

/** One change a caller asked for, waiting for its transaction. */
export type Op =
  | ({ kind: 'register'; info: PluginInstanceInfo } & Settle)
  | ({ kind: 'deregister'; type: string; name: string; allocId: string } & Settle);

/** What a batch of changes would do, worked out on copies of the lists it touches. */
export interface Plan {
  changes: RegistryChange[];
  /** (type, name) -> the list after the batch. */
  lists: Map<string, { type: string; name: string; list: PluginInstanceInfo[] }>;
  /** Types the batch introduces. */
  newTypes: Set<string>;
  outcomes: Array<{ op: Op; event?: ChangeEvent; error?: BerthError }>;
}

const nameKey = (type: string, name: string) => JSON.stringify([type, name]);

/**
 * The registry's catalogue: type -> name -> instances, newest first (a
 * name's list is never left empty), and what a batch of changes would do to
 * it. It holds only what is durable: the registry's write pipeline plans a
 * batch here, persists it, and applies it here only once it landed.
 */
export class Catalogue {
  readonly #plugins = new Map<string, Map<string, PluginInstanceInfo[]>>();

  get typeCount(): number {
    return this.#plugins.size;
  }

  has(type: string): boolean {
    return this.#plugins.has(type);
  }

  /** The current instance of each name of a type, by name (copies); undefined for an unknown type. */
  list(type: string): PluginInstanceInfo[] | undefined {
    const byName = this.#plugins.get(type);
    if (byName === undefined) return undefined;
    const current: PluginInstanceInfo[] = [];
    for (const name of [...byName.keys()].sort()) {
      const front = byName.get(name)?.[0];
      if (front !== undefined) current.push(copyInfo(front));
    }
    return current;
  }

  /** Every instance of a name, newest first (copies). */
  instances(type: string, name: string): PluginInstanceInfo[] {
    return (this.#plugins.get(type)?.get(name) ?? []).map(copyInfo);
  }

  types(): string[] {
    return [...this.#plugins.keys()].sort();
  }

  find(key: InstanceKey): PluginInstanceInfo | undefined {
    return this.#plugins
      .get(key.type)
      ?.get(key.name)
      ?.find((entry) => entry.allocId === key.allocId);
  }

  /** The name's current instance (not a copy). */
  current(type: string, name: string): PluginInstanceInfo | undefined {
    return this.#plugins.get(type)?.get(name)?.[0];
  }

  requireType(type: string): Map<string, PluginInstanceInfo[]> {
    const byName = this.#plugins.get(type);
    if (byName === undefined) throw noPluginsForType(type);
    return byName;
  }

  /** The whole catalogue, as the storage's whole-state shape. */
  snapshot(): RegistryState {
    const plugins: RegistryState['plugins'] = {};
    for (const [type, byName] of this.#plugins) {
      const names: Record<string, PluginInstanceInfo[]> = {};
      for (const [name, list] of byName) setOwn(names, name, list.map(copyInfo));
      setOwn(plugins, type, names);
    }
    return { plugins };
  }

  /** Fills the catalogue from persisted state; returns how many instances it read. */
  load(state: RegistryState | undefined): number {
    let instances = 0;
    for (const [type, byName] of Object.entries(state?.plugins ?? {})) {
      const names = new Map<string, PluginInstanceInfo[]>();
      for (const [name, list] of Object.entries(byName ?? {})) {
        if (!Array.isArray(list) || list.length === 0) continue;
        names.set(name, list.map(copyInfo));
        instances += list.length;
      }
      this.#plugins.set(type, names);
    }
    return instances;
  }

  /** What `ops` would change, in order, without changing anything yet. */
  plan(ops: Op[]): Plan {
    const plan: Plan = { changes: [], lists: new Map(), newTypes: new Set(), outcomes: [] };
    const listFor = (type: string, name: string) => {
      const key = nameKey(type, name);
      let entry = plan.lists.get(key);
      if (entry === undefined) {
        entry = { type, name, list: [...(this.#plugins.get(type)?.get(name) ?? [])] };
        plan.lists.set(key, entry);
      }
      return entry.list;
    };
    for (const op of ops) {
      if (op.kind === 'register') {
        const incoming = op.info;
        const list = listFor(incoming.type, incoming.name);
        const index = list.findIndex((entry) => entry.allocId === incoming.allocId);
        const existing = list[index];
        if (existing !== undefined) {
          if (sameDefinition(existing, incoming)) {
            plan.outcomes.push({ op });
            continue;
          }
          // nomad#11786: a changed definition replaces the entry where it stands and is announced.
          const updated = { ...incoming };
          if (existing.registeredAt !== undefined) updated.registeredAt = existing.registeredAt;
          list[index] = updated;
          plan.changes.push({ op: 'put', info: updated, front: false });
          plan.outcomes.push({
            op,
            event: { type: 'updated', at: op.at, plugin: copyInfo(updated), previous: copyInfo(existing) },
          });
          continue;
        }
        const entry = { ...incoming, registeredAt: op.at };
        list.unshift(entry);
        if (!this.#plugins.has(incoming.type)) plan.newTypes.add(incoming.type);
        plan.changes.push({ op: 'put', info: entry, front: true });
        plan.outcomes.push({ op, event: { type: 'registered', at: op.at, plugin: copyInfo(entry) } });
        continue;
      }
      if (!this.#plugins.has(op.type) && !plan.newTypes.has(op.type)) {
        plan.outcomes.push({ op, error: noPluginsForType(op.type) });
        continue;
      }
      const list = listFor(op.type, op.name);
      const index = list.findIndex((entry) => entry.allocId === op.allocId);
      const removed = list[index];
      // Unlike upstream, a miss announces nothing: no consumer tears down an instance that is still there.
      if (removed === undefined) {
        plan.outcomes.push({ op });
        continue;
      }
      list.splice(index, 1);
      plan.changes.push({ op: 'delete', type: op.type, name: op.name, allocId: op.allocId });
      plan.outcomes.push({ op, event: { type: 'deregistered', at: op.at, plugin: copyInfo(removed) } });
    }
    return plan;
  }

  /** Makes a durable batch's lists the catalogue's (its outcomes are the caller's to announce). */
  apply(plan: Plan): void {
    for (const type of plan.newTypes) if (!this.#plugins.has(type)) this.#plugins.set(type, new Map());
    for (const { type, name, list } of plan.lists.values()) {
      const byName = this.#plugins.get(type);
      if (byName === undefined) continue; // only a refused deregister of an unknown type looked here
      if (list.length === 0) byName.delete(name);
      else byName.set(name, list);
    }
  }

  /**
   * Takes an instance out at once although its delete did not land (its
   * socket is gone; the delete stays pending). Returns what was removed;
   * throws BERTH_NO_PLUGINS_FOR_TYPE for an unknown type.
   */
  hide(key: InstanceKey): PluginInstanceInfo | undefined {
    const byName = this.requireType(key.type);
    const list = byName.get(key.name);
    const index = list?.findIndex((entry) => entry.allocId === key.allocId) ?? -1;
    const removed = list?.[index];
    if (list === undefined || removed === undefined) return undefined;
    list.splice(index, 1);
    if (list.length === 0) byName.delete(key.name);
    return removed;
  }
}

/** Types and names are plugin input: "__proto__" must become a key, not a prototype. */
function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

export function noPluginsForType(type: string): BerthError {
  return new BerthError('BERTH_NO_PLUGINS_FOR_TYPE', `no plugins registered for type: ${type}`);
}
