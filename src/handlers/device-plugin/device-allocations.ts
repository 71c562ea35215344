import { AllocationStore, type LoadResult, type StoredAllocation } from './allocation-store.js';

/**
 * The device manager's allocations: resource -> workload -> allocation, in
 * memory and durably in the allocation store (`devices.db`). Every change
 * is written before it is visible. The inventory (which devices a resource
 * has, and their health) is the manager's; this only records who holds what.
 */
export class DeviceAllocations {
  readonly #byResource = new Map<string, Map<string, StoredAllocation>>();
  #store: AllocationStore | undefined;

  /** Opens the store and restores what it holds; returns what was read and what could not be. */
  open(path: string): LoadResult {
    const store = new AllocationStore(path);
    this.#store = store;
    const loaded = store.load();
    for (const allocation of loaded.allocations)
      this.#held(allocation.resource).set(allocation.workload, allocation);
    return loaded;
  }

  close(): void {
    this.#store?.close();
  }

  /** The resources that hold at least one allocation. */
  resources(): IterableIterator<string> {
    return this.#byResource.keys();
  }

  has(resource: string): boolean {
    return this.#byResource.has(resource);
  }

  /** A resource's allocations by workload (empty when it has none). */
  of(resource: string): ReadonlyMap<string, StoredAllocation> {
    return this.#byResource.get(resource) ?? new Map();
  }

  /** Records an allocation: durable first, then visible. */
  add(allocation: StoredAllocation): void {
    this.#store?.add(allocation);
    this.#held(allocation.resource).set(allocation.workload, allocation);
  }

  /** Removes a workload's allocation (durable first); undefined when it holds none. */
  remove(resource: string, workload: string): StoredAllocation | undefined {
    const held = this.#byResource.get(resource);
    const allocation = held?.get(workload);
    if (held === undefined || allocation === undefined) return undefined;
    this.#store?.remove(resource, workload);
    held.delete(workload);
    if (held.size === 0) this.#byResource.delete(resource);
    return allocation;
  }

  #held(resource: string): Map<string, StoredAllocation> {
    let map = this.#byResource.get(resource);
    if (map === undefined) {
      map = new Map();
      this.#byResource.set(resource, map);
    }
    return map;
  }
}
