import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import {
  type BackoffSetting,
  backoffDelayMs,
  type Clock,
  errorMessage,
  LifecycleComponent,
  type Logger,
  silentLogger,
  sleep,
  systemClock,
} from '../common/index.js';
import type { ClusterEvent, ClusterNode, ClusterPlugin } from './cluster-events.js';
import { type ClusterKeys, clusterKeys, prefixEnd } from './cluster-keys.js';
import { CLUSTER_DEFAULTS } from './cluster-options.js';
import { ClusterState, type RawKey } from './cluster-state.js';

export interface ClusterReaderOptions {
  client: Etcd3;
  ownsClient?: boolean;
  prefix?: string;
  pageSize?: number;
  probeIntervalMs?: number;
  staleAfterMs?: number;
  progressTimeoutMs?: number;
  callTimeoutMs?: number;
  backoff?: BackoffSetting;
  clock?: Clock;
  logger?: Logger;
}

export interface PluginFilter {
  type?: string;
  name?: string;
  node?: string;
}

export interface ClusterViewStatus {
  /** The etcd revision the view reflects. */
  revision: string;
  /** True while the reader cannot confirm it sees the quorum's data; the last data is kept. */
  stale: boolean;
  /** Since when (ms since the epoch) the reader has had no confirmed contact, if stale. */
  staleSince?: number;
  /** When the view was last confirmed current (a list, a watch response or a probe). */
  lastContactAt: number;
  relists: number;
}

/**
 * The fleet view (a reader): a paged list of the root prefix at one pinned
 * revision, then one watch from revision + 1 with previous values. A watch
 * error (compaction included: etcd3 reports it as a bare "Watcher canceled"),
 * a stall of data and progress notifications, or a return from a stale spell
 * re-lists and emits only the differences, so nothing is lost or duplicated.
 * A linearizable probe notices a member cut off from quorum, whose watch stays
 * open and silent: after `staleAfterMs` the view is marked stale (and an event
 * says so) but keeps its data.
 */
export class ClusterReader extends LifecycleComponent {
  readonly #client: Etcd3;
  readonly #ownsClient: boolean;
  readonly #keys: ClusterKeys;
  readonly #pageSize: number;
  readonly #probeIntervalMs: number;
  readonly #staleAfterMs: number;
  readonly #progressTimeoutMs: number;
  readonly #callTimeoutMs: number;
  readonly #backoff: BackoffSetting;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #state: ClusterState;
  readonly #listeners = new Set<(event: ClusterEvent) => void>();

  #revision = '0';
  #stale = false;
  #staleSince: number | undefined;
  #lastContactAt = 0;
  #lastProbeOk = 0;
  #lastWatchData = 0;
  #relists = 0;
  #watcher: Watcher | undefined;
  #relistWanted: string | undefined;
  #wake: (() => void) | undefined;
  #loops: Promise<void>[] = [];
  #synced = false;
  #syncedWaiters: Array<() => void> = [];

  constructor(options: ClusterReaderOptions) {
    super();
    this.#client = options.client;
    this.#ownsClient = options.ownsClient ?? false;
    this.#keys = clusterKeys(options.prefix ?? CLUSTER_DEFAULTS.prefix);
    this.#pageSize = options.pageSize ?? CLUSTER_DEFAULTS.pageSize;
    this.#probeIntervalMs = options.probeIntervalMs ?? CLUSTER_DEFAULTS.probeIntervalMs;
    this.#staleAfterMs = options.staleAfterMs ?? CLUSTER_DEFAULTS.staleAfterMs;
    this.#progressTimeoutMs = options.progressTimeoutMs ?? CLUSTER_DEFAULTS.progressTimeoutMs;
    this.#callTimeoutMs = options.callTimeoutMs ?? CLUSTER_DEFAULTS.callTimeoutMs;
    this.#backoff = options.backoff ?? CLUSTER_DEFAULTS.backoff;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'cluster-reader' });
    this.#state = new ClusterState(this.#keys);
  }

  protected override onStart(signal: AbortSignal): Promise<void> | void {
    return this.#start(signal);
  }

  protected override onStop(): Promise<void> | void {
    return this.#stop();
  }

  get status(): ClusterViewStatus {
    const status: ClusterViewStatus = {
      revision: this.#revision,
      stale: this.#stale,
      lastContactAt: this.#lastContactAt,
      relists: this.#relists,
    };
    if (this.#staleSince !== undefined) status.staleSince = this.#staleSince;
    return status;
  }

  nodes(): ClusterNode[] {
    return this.#state.nodes();
  }

  plugins(filter: PluginFilter = {}): ClusterPlugin[] {
    return this.#state
      .plugins()
      .filter(
        (p) =>
          (filter.type === undefined || p.type === filter.type) &&
          (filter.name === undefined || p.name === filter.name) &&
          (filter.node === undefined || p.node === filter.node),
      );
  }

  /** Every raw key under the root as the reader holds it (for the checker). */
  rawKeys(): Map<string, RawKey> {
    return this.#state.raw();
  }

  /** Calls `listener` for every event from now on; returns the unsubscribe function. */
  onEvent(listener: (event: ClusterEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once the first list has been applied. */
  synced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  async #start(signal: AbortSignal): Promise<void> {
    this.#lastContactAt = this.#clock.now();
    this.#lastProbeOk = this.#clock.now();
    this.#relistWanted = 'start';
    this.#loops.push(this.#syncLoop(signal), this.#probeLoop(signal));
  }

  async #stop(): Promise<void> {
    this.#wake?.();
    await Promise.allSettled(this.#loops);
    await this.#dropWatcher();
    if (this.#ownsClient) this.#client.close();
  }

  #emit(events: ClusterEvent[]): void {
    for (const event of events) {
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch (err) {
          this.#logger.error({ err: errorMessage(err) }, 'cluster event listener threw');
        }
      }
    }
  }

  #requestRelist(reason: string): void {
    this.#relistWanted ??= reason;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Lists and watches; re-lists whenever asked to (watch error, stall, recovery). */
  async #syncLoop(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      const reason = this.#relistWanted;
      if (reason === undefined) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        continue;
      }
      this.#relistWanted = undefined;
      try {
        await this.#dropWatcher();
        const { kvs, revision } = await this.#list();
        if (signal.aborted) return;
        const events = this.#state.replaceAll(kvs, revision);
        this.#revision = revision;
        this.#touch();
        if (reason !== 'start') {
          this.#relists++;
          this.#emit([{ type: 'relisted', revision, at: this.#clock.now(), reason }]);
        }
        this.#emit(events);
        await this.#watchFrom(revision);
        failures = 0;
        if (!this.#synced) {
          this.#synced = true;
          for (const resolve of this.#syncedWaiters.splice(0)) resolve();
        }
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        this.#relistWanted ??= reason;
        const delay = backoffDelayMs(this.#backoff, failures);
        if (failures === 1 || failures % 10 === 0) {
          this.#logger.warn({ err: errorMessage(err), failures, retryInMs: delay }, 'cluster list failed');
        }
        try {
          await sleep(this.#clock, delay, signal);
        } catch {
          return;
        }
      }
    }
  }

  /** Pages through the root prefix at one revision: the first page's, read linearizably. */
  async #list(): Promise<{ kvs: RawKey[]; revision: string }> {
    const end = prefixEnd(this.#keys.root);
    const kvs: RawKey[] = [];
    let start = Buffer.from(this.#keys.root);
    let revision: string | undefined;
    while (true) {
      const response = await this.#client.kv.range(
        {
          key: start,
          range_end: end,
          limit: this.#pageSize,
          ...(revision === undefined ? {} : { revision }),
        },
        { deadline: Date.now() + this.#callTimeoutMs },
      );
      revision ??= response.header.revision;
      for (const kv of response.kvs) kvs.push(rawOf(kv));
      const last = response.kvs.at(-1);
      if (!response.more || last === undefined) return { kvs, revision };
      start = Buffer.concat([last.key, Buffer.from([0])]);
    }
  }

  async #watchFrom(revision: string): Promise<void> {
    let resume = BigInt(revision) + 1n;
    // Handlers go on before the watch connects: a compacted start revision is reported right
    // after 'connected', and a listener attached after create() resolved would miss it.
    const watcher = this.#client
      .watch()
      .prefix(this.#keys.root)
      .withPreviousKV()
      .startRevision(resume.toString())
      .watcher();
    this.#watcher = watcher;
    this.#lastWatchData = this.#clock.now();
    watcher.on('data', (response: IWatchResponse) => {
      if (watcher !== this.#watcher) return;
      try {
        this.#lastWatchData = this.#clock.now();
        const header = response.header.revision;
        if (response.events.length > 0) {
          // One response may carry several revisions; each is applied (and reported) as one batch.
          const groups = new Map<string, Parameters<ClusterState['applyChanges']>[0]>();
          for (const event of response.events) {
            const at = event.kv.mod_revision;
            let group = groups.get(at);
            if (group === undefined) {
              group = [];
              groups.set(at, group);
            }
            group.push(
              event.type === 'Delete'
                ? { kind: 'delete', key: event.kv.key.toString(), modRevision: at }
                : { kind: 'put', kv: rawOf(event.kv) },
            );
          }
          for (const [at, changes] of groups) {
            if (BigInt(at) >= resume) resume = BigInt(at) + 1n;
            if (BigInt(at) > BigInt(this.#revision)) this.#revision = at;
            this.#emit(this.#state.applyChanges(changes, at));
          }
        } else if (BigInt(header) >= resume) {
          // A progress notification: every event up to `header` has been sent.
          resume = BigInt(header) + 1n;
          if (BigInt(header) > BigInt(this.#revision)) this.#revision = header;
        }
      } catch (err) {
        this.#requestRelist(`watch data could not be applied: ${errorMessage(err)}`);
      }
    });
    watcher.on('disconnected', () => {
      // etcd3 reconnects by itself; resume right after what we applied, never from its header guess.
      watcher.request.start_revision = resume.toString();
    });
    watcher.on('error', (err: Error) => {
      if (watcher === this.#watcher) {
        this.#watcher = undefined;
        this.#requestRelist(`watch failed: ${err.message || 'canceled (compacted)'}`);
      }
    });
    watcher.on('end', () => {
      if (watcher === this.#watcher) {
        this.#watcher = undefined;
        this.#requestRelist('watch ended');
      }
    });
  }

  async #dropWatcher(): Promise<void> {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    if (watcher === undefined) return;
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    try {
      await Promise.race([
        watcher.cancel(),
        new Promise<void>((resolve) => {
          timer = this.#clock.setTimeout(resolve, this.#callTimeoutMs);
        }),
      ]);
    } catch {
      // The stream is gone anyway.
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
  }

  #touch(): void {
    const now = this.#clock.now();
    this.#lastContactAt = now;
    this.#lastProbeOk = now;
  }

  /**
   * Every probe interval: a linearizable count-only read. It fails on a member
   * without a leader, which is how a silent watch on a minority member is
   * noticed. Also re-lists a watch that has sent neither data nor progress.
   */
  async #probeLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await sleep(this.#clock, this.#probeIntervalMs, signal);
      } catch {
        return;
      }
      try {
        await this.#client.kv.range(
          { key: Buffer.from(this.#keys.root), range_end: prefixEnd(this.#keys.root), count_only: true },
          { deadline: Date.now() + Math.min(this.#callTimeoutMs, this.#probeIntervalMs * 2) },
        );
        const now = this.#clock.now();
        this.#lastProbeOk = now;
        this.#lastContactAt = now;
        if (this.#stale) {
          this.#stale = false;
          this.#staleSince = undefined;
          this.#emit([{ type: 'fresh', revision: this.#revision, at: now }]);
          this.#requestRelist('reached the quorum again');
        } else if (this.#watcher !== undefined && now - this.#lastWatchData > this.#progressTimeoutMs) {
          this.#requestRelist('no watch data or progress notification');
        }
      } catch (err) {
        const now = this.#clock.now();
        if (!this.#stale && now - this.#lastProbeOk > this.#staleAfterMs) {
          this.#stale = true;
          this.#staleSince = this.#lastProbeOk;
          const reason = errorMessage(err);
          this.#logger.warn({ err: reason }, 'cluster view is stale: etcd quorum unreachable');
          this.#emit([{ type: 'stale', revision: this.#revision, at: now, reason }]);
        }
      }
    }
  }
}

function rawOf(kv: IKeyValue): RawKey {
  return {
    key: kv.key.toString(),
    value: kv.value.toString(),
    modRevision: kv.mod_revision,
    lease: kv.lease,
  };
}
