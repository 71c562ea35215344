import { randomUUID } from 'node:crypto';
import type { Etcd3, IRequestOp, ITxnResponse } from 'etcd3';
import {
  type BackoffSetting,
  BerthError,
  backoffDelayMs,
  type Clock,
  errorMessage,
  LifecycleComponent,
  type Logger,
  type PluginInstanceInfo,
  type RegistryEvent,
  silentLogger,
  sleep,
  systemClock,
} from '../common/index.js';
import type { ClusterWriterEvent, LeaseState } from './cluster-events.js';
import { type ClusterKeys, clusterKeys, prefixEnd } from './cluster-keys.js';
import { ClusterLease } from './cluster-lease.js';
import { CLUSTER_DEFAULTS } from './cluster-options.js';
import { decodeRecord, encodeRecord, type NodeRecord, pluginRecord } from './cluster-values.js';
import type { PluginSource } from './plugin-source.js';

export interface ClusterWriterOptions {
  client: Etcd3;
  /** Closed by stop() when true (the writer made it). Default false. */
  ownsClient?: boolean;
  source: PluginSource;
  nodeName: string;
  /** Stable id of this daemon installation: a restart with the same id adopts the previous run's keys. */
  instance?: string;
  prefix?: string;
  leaseTtlSeconds?: number;
  backoff?: BackoffSetting;
  maxOpsPerTxn?: number;
  callTimeoutMs?: number;
  maxValueBytes?: number;
  daemonVersion?: string;
  clock?: Clock;
  logger?: Logger;
  onEvent?: (event: ClusterWriterEvent) => void;
  /** How stop() leaves etcd (settable later through `stopMode`). Default 'revoke'. */
  stopMode?: StopMode;
}

/** How stop() leaves etcd: revoke (entries vanish now) or release (entries stay for the TTL, to be adopted). */
export type StopMode = 'revoke' | 'release';

interface KeyState {
  value: string;
  lease: string;
  modRevision: string;
}

/**
 * Publishes this node's registry to etcd under one lease (see cluster-keys.ts
 * for the layout). Publishing is on change only: a registry event updates the
 * desired map, and one loop writes the difference between desired and
 * published in transactions guarded by the node key's mod revision (the
 * fencing token). The lease is renewed by its own loop; renewals cost no
 * revision. Nothing local waits for etcd: registry events are only recorded.
 */
export class ClusterWriter extends LifecycleComponent {
  readonly nodeName: string;
  readonly instance: string;
  readonly #client: Etcd3;
  readonly #ownsClient: boolean;
  readonly #source: PluginSource;
  readonly #keys: ClusterKeys;
  readonly #ttl: number;
  readonly #backoff: BackoffSetting;
  readonly #maxOps: number;
  readonly #callTimeoutMs: number;
  readonly #maxValueBytes: number;
  readonly #daemonVersion: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #onEvent: (event: ClusterWriterEvent) => void;

  /** key → encoded value this node should have in etcd. */
  readonly #desired = new Map<string, string>();
  /** When each desired change was recorded, for publish latency. */
  readonly #changedAt = new Map<string, number>();
  /** key → encoded value etcd has under our current lease, as far as we know. */
  #published = new Map<string, string>();
  /** The lease and its renewal (cluster-lease.ts); this file is the publishing. */
  readonly #leases: ClusterLease;
  #nodeRevision: string | undefined;
  #needsFullSync = true;
  #wake: (() => void) | undefined;
  #dirty = true;
  #conflict: { holder: string; message: string } | undefined;
  #loops: Promise<void>[] = [];
  #stopMode: StopMode;
  #lastError: string | undefined;

  constructor(options: ClusterWriterOptions) {
    super();
    if (options.nodeName === '') throw new BerthError('BERTH_INVALID_ARGUMENT', 'cluster node name is empty');
    this.nodeName = options.nodeName;
    this.instance = options.instance ?? randomUUID();
    this.#client = options.client;
    this.#ownsClient = options.ownsClient ?? false;
    this.#source = options.source;
    this.#keys = clusterKeys(options.prefix ?? CLUSTER_DEFAULTS.prefix);
    this.#ttl = options.leaseTtlSeconds ?? CLUSTER_DEFAULTS.leaseTtlSeconds;
    this.#backoff = options.backoff ?? CLUSTER_DEFAULTS.backoff;
    this.#maxOps = options.maxOpsPerTxn ?? CLUSTER_DEFAULTS.maxOpsPerTxn;
    this.#callTimeoutMs = options.callTimeoutMs ?? CLUSTER_DEFAULTS.callTimeoutMs;
    this.#maxValueBytes = options.maxValueBytes ?? CLUSTER_DEFAULTS.maxValueBytes;
    this.#daemonVersion = options.daemonVersion ?? 'unknown';
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'cluster-writer' });
    this.#onEvent = options.onEvent ?? (() => {});
    this.#stopMode = options.stopMode ?? 'revoke';
    this.#leases = new ClusterLease({
      client: this.#client,
      ttlSeconds: this.#ttl,
      callTimeoutMs: this.#callTimeoutMs,
      clock: this.#clock,
      logger: this.#logger,
      onEvent: (event) => this.#onEvent(event),
      onLost: () => {
        this.#nodeRevision = undefined;
        this.#needsFullSync = true;
        this.#kick();
      },
      onRecovered: () => {
        this.#needsFullSync = true;
        this.#kick();
      },
      syncPending: () => this.#needsFullSync,
    });
  }

  protected override onStart(signal: AbortSignal): Promise<void> | void {
    return this.#start(signal);
  }

  protected override onStop(): Promise<void> | void {
    return this.#stop();
  }

  get leaseState(): LeaseState {
    return this.#leases.state;
  }

  /** The current lease (decimal), if one is held. */
  get lease(): string | undefined {
    return this.#leases.current;
  }

  /** The node key's mod revision this writer guards its writes with. */
  get fencingToken(): string | undefined {
    return this.#nodeRevision;
  }

  /** Set while another instance owns the node name; this writer then publishes nothing. */
  get conflict(): { holder: string; message: string } | undefined {
    return this.#conflict;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** True when everything desired is published under a held lease. */
  get inSync(): boolean {
    if (this.#leases.state !== 'held' || this.#needsFullSync || this.#dirty) return false;
    if (this.#published.size !== this.#desired.size) return false;
    for (const [key, value] of this.#desired) if (this.#published.get(key) !== value) return false;
    return true;
  }

  /**
   * How stop() leaves etcd: 'revoke' makes every entry of this node vanish in
   * one revision; 'release' leaves the entries to expire after the TTL, for a
   * restart that adopts them. Read when stop() runs, so a caller may choose at
   * shutdown.
   */
  get stopMode(): StopMode {
    return this.#stopMode;
  }

  set stopMode(mode: StopMode) {
    this.#stopMode = mode;
  }

  async #start(signal: AbortSignal): Promise<void> {
    // Subscribe before listing so no change falls between the two; replays are idempotent.
    const events = this.#source.subscribe(signal)[Symbol.asyncIterator]();
    this.#relist();
    this.#loops.push(
      this.#consume(events, signal),
      this.#publishLoop(signal),
      this.#leases.renewLoop(signal),
    );
  }

  async #stop(): Promise<void> {
    this.#kick();
    await Promise.allSettled(this.#loops);
    await this.#leases.end(this.#stopMode);
    if (this.#ownsClient) this.#client.close();
  }

  // ---- input: the local registry --------------------------------------------------------

  #relist(): void {
    const now = this.#clock.now();
    const next = new Map<string, string>();
    for (const info of this.#source.list()) {
      const entry = this.#entryFor(info);
      if (entry !== undefined) next.set(entry[0], entry[1]);
    }
    for (const key of this.#desired.keys()) if (!next.has(key)) this.#changedAt.set(key, now);
    for (const [key, value] of next) if (this.#desired.get(key) !== value) this.#changedAt.set(key, now);
    this.#desired.clear();
    for (const [key, value] of next) this.#desired.set(key, value);
    this.#kick();
  }

  async #consume(events: AsyncIterator<RegistryEvent>, signal: AbortSignal) {
    try {
      while (!signal.aborted) {
        const next = await events.next();
        if (next.done) return;
        const event = next.value;
        if (event.type === 'lagged') {
          this.#relist();
          continue;
        }
        const now = this.#clock.now();
        if (event.type === 'updated' && event.previous.allocId !== event.plugin.allocId) {
          this.#remove(event.previous, now);
        }
        if (event.type === 'deregistered') this.#remove(event.plugin, now);
        else {
          const entry = this.#entryFor(event.plugin);
          if (entry !== undefined && this.#desired.get(entry[0]) !== entry[1]) {
            this.#desired.set(entry[0], entry[1]);
            this.#changedAt.set(entry[0], now);
          }
        }
        this.#kick();
      }
    } catch (err) {
      if (!signal.aborted) this.#logger.error({ err: errorMessage(err) }, 'registry subscription ended');
    }
  }

  #remove(info: PluginInstanceInfo, now: number): void {
    const key = this.#keys.pluginKey(this.nodeName, info.type, info.name, info.allocId);
    if (this.#desired.delete(key)) this.#changedAt.set(key, now);
  }

  #entryFor(info: PluginInstanceInfo): [string, string] | undefined {
    const key = this.#keys.pluginKey(this.nodeName, info.type, info.name, info.allocId);
    const value = encodeRecord(pluginRecord(this.nodeName, info));
    if (Buffer.byteLength(value) > this.#maxValueBytes) {
      // A plugin's facts are outside input: an oversized entry is reported and skipped, never sent.
      this.#logger.warn(
        { plugin: `${info.type}/${info.name}`, bytes: Buffer.byteLength(value), limit: this.#maxValueBytes },
        'plugin entry too large to publish; skipped',
      );
      return undefined;
    }
    return [key, value];
  }

  // ---- output: etcd ---------------------------------------------------------------------

  #kick(): void {
    this.#dirty = true;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #publishLoop(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      if (!this.#dirty) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        continue;
      }
      this.#dirty = false;
      try {
        await this.#syncOnce();
        failures = 0;
        this.#lastError = undefined;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        this.#dirty = true;
        this.#lastError = errorMessage(err);
        const delay = backoffDelayMs(this.#backoff, failures);
        const level =
          err instanceof BerthError && err.code === 'BERTH_CLUSTER_NODE_CONFLICT' ? 'error' : 'warn';
        if (failures === 1 || failures % 10 === 0) {
          this.#logger[level]({ err: this.#lastError, failures, retryInMs: delay }, 'cluster publish failed');
        }
        try {
          await sleep(this.#clock, delay, signal);
        } catch {
          return;
        }
      }
    }
  }

  async #syncOnce(): Promise<void> {
    let lease = this.#leases.current;
    if (lease === undefined) {
      lease = await this.#leases.grant();
      this.#needsFullSync = true;
    }
    if (this.#needsFullSync) {
      await this.#fullSync(lease);
      this.#needsFullSync = false;
      this.#conflict = undefined;
      if (this.#leases.state !== 'held') this.#leases.setState('held', lease);
      return;
    }
    await this.#publishDiff();
  }

  /**
   * Claims the node key for `lease` and makes this node's plugin keys exactly
   * the desired ones, all on `lease`. A node key of another instance is a
   * conflict (we do not fight); one of our own previous run is adopted: its
   * keys are re-put on the new lease (identical values, so readers see no
   * change), the gone ones deleted, and then its lease is revoked.
   */
  async #fullSync(lease: string): Promise<void> {
    const nodeKey = this.#keys.nodeKey(this.nodeName);
    const read = await this.#txn({
      success: [
        { request_range: { key: Buffer.from(nodeKey) } },
        {
          request_range: {
            key: Buffer.from(this.#keys.nodePluginsPrefix(this.nodeName)),
            range_end: prefixEnd(this.#keys.nodePluginsPrefix(this.nodeName)),
          },
        },
      ],
    });
    const nodeKv = read.responses[0]?.response_range.kvs[0];
    const existing = new Map<string, KeyState>();
    for (const kv of read.responses[1]?.response_range.kvs ?? []) {
      existing.set(kv.key.toString(), {
        value: kv.value.toString(),
        lease: kv.lease,
        modRevision: kv.mod_revision,
      });
    }
    const previous = nodeKv === undefined ? undefined : decodeRecord<NodeRecord>(nodeKv.value.toString());
    if (nodeKv !== undefined && previous?.instance !== this.instance) {
      await this.#enterConflict(lease, previous?.instance ?? 'an unreadable node key');
    }
    const desired = new Map(this.#desired);
    const ops: IRequestOp[] = [];
    for (const [key, value] of desired) {
      const have = existing.get(key);
      if (have === undefined || have.value !== value || have.lease !== lease)
        ops.push(putOp(key, value, lease));
    }
    for (const key of existing.keys()) if (!desired.has(key)) ops.push(deleteOp(key));

    const ownNode = nodeKv !== undefined && nodeKv.lease === lease && previous?.instance === this.instance;
    let token: string;
    let rest: IRequestOp[];
    if (ownNode) {
      token = nodeKv.mod_revision;
      rest = ops;
    } else {
      // The first transaction claims the node key (new lease, new token) together with the first ops.
      const record: NodeRecord = {
        node: this.nodeName,
        instance: this.instance,
        lease,
        startedAt: this.#clock.now(),
        daemon: this.#daemonVersion,
      };
      const first = ops.slice(0, this.#maxOps - 1);
      rest = ops.slice(first.length);
      const guard =
        nodeKv === undefined
          ? {
              key: Buffer.from(nodeKey),
              target: 'Create' as const,
              result: 'Equal' as const,
              create_revision: 0,
            }
          : {
              key: Buffer.from(nodeKey),
              target: 'Mod' as const,
              result: 'Equal' as const,
              mod_revision: nodeKv.mod_revision,
            };
      const claimed = await this.#txn({
        compare: [guard],
        success: [putOp(nodeKey, encodeRecord(record), lease), ...first],
      });
      if (!claimed.succeeded)
        throw new BerthError(
          'BERTH_CLUSTER_UNAVAILABLE',
          `node key ${nodeKey} changed while claiming it; retrying`,
        );
      token = claimed.header.revision;
    }
    this.#nodeRevision = token;
    for (let i = 0; i < rest.length; i += this.#maxOps) {
      await this.#guarded(rest.slice(i, i + this.#maxOps));
    }
    const start = Math.min(...[...this.#changedAt.values(), this.#clock.now()]);
    this.#published = desired;
    this.#changedAt.clear();
    if (ops.length > 0) this.#report(ops, start);
    // Adoption: the previous run's lease now holds only what we did not re-put; revoking it removes that.
    if (nodeKv !== undefined && nodeKv.lease !== lease && nodeKv.lease !== '0') {
      await this.#leases.revokeQuietly(nodeKv.lease);
    }
  }

  async #enterConflict(ourLease: string, holder: string): Promise<never> {
    const message = `node name "${this.nodeName}" is already published by instance ${holder}; not publishing (set cluster.nodeName to a unique name)`;
    if (this.#conflict === undefined) {
      this.#onEvent({ type: 'conflict', at: this.#clock.now(), node: this.nodeName, holder, message });
    }
    this.#conflict = { holder, message };
    // The fresh lease holds nothing; give it back rather than keep renewing it.
    this.#leases.forget('conflict');
    await this.#leases.revokeQuietly(ourLease);
    throw new BerthError('BERTH_CLUSTER_NODE_CONFLICT', message, {
      details: { node: this.nodeName, holder },
    });
  }

  async #publishDiff(): Promise<void> {
    const desired = new Map(this.#desired);
    const ops: IRequestOp[] = [];
    const lease = this.#leases.current as string;
    for (const [key, value] of desired)
      if (this.#published.get(key) !== value) ops.push(putOp(key, value, lease));
    for (const key of this.#published.keys()) if (!desired.has(key)) ops.push(deleteOp(key));
    if (ops.length === 0) return;
    const changed = [...desired.keys(), ...this.#published.keys()].filter(
      (key) => desired.get(key) !== this.#published.get(key),
    );
    const start = Math.min(...changed.map((key) => this.#changedAt.get(key) ?? this.#clock.now()));
    for (let i = 0; i < ops.length; i += this.#maxOps) {
      await this.#guarded(ops.slice(i, i + this.#maxOps));
    }
    this.#published = desired;
    for (const key of changed) this.#changedAt.delete(key);
    this.#report(ops, start);
  }

  /** One transaction of plugin ops, applied only while the node key still carries our token. */
  async #guarded(ops: IRequestOp[]): Promise<void> {
    const nodeKey = this.#keys.nodeKey(this.nodeName);
    const response = await this.#txn({
      compare: [
        {
          key: Buffer.from(nodeKey),
          target: 'Mod',
          result: 'Equal',
          mod_revision: this.#nodeRevision ?? '0',
        },
      ],
      success: ops,
      failure: [{ request_range: { key: Buffer.from(nodeKey) } }],
    });
    if (response.succeeded) return;
    // The token is gone: our lease expired (the key with it), or someone else holds the name.
    const current = response.responses[0]?.response_range.kvs[0];
    const holder = current === undefined ? undefined : decodeRecord<NodeRecord>(current.value.toString());
    this.#needsFullSync = true;
    if (current === undefined || holder?.instance === this.instance) {
      this.#leases.lost('the node key vanished (lease expired)');
      throw new BerthError('BERTH_CLUSTER_UNAVAILABLE', `node key ${nodeKey} is gone; re-granting the lease`);
    }
    const lease = this.#leases.current;
    if (lease !== undefined) await this.#enterConflict(lease, holder?.instance ?? 'unknown');
  }

  #report(ops: IRequestOp[], start: number): void {
    const puts = ops.filter((op) => op.request_put !== undefined).length;
    this.#onEvent({
      type: 'published',
      at: this.#clock.now(),
      puts,
      deletes: ops.length - puts,
      latencyMs: Math.max(0, this.#clock.now() - start),
    });
  }

  async #txn(request: Parameters<Etcd3['kv']['txn']>[0]): Promise<ITxnResponse> {
    return this.#client.kv.txn(request, { deadline: Date.now() + this.#callTimeoutMs });
  }
}

function putOp(key: string, value: string, lease: string): IRequestOp {
  return { request_put: { key: Buffer.from(key), value: Buffer.from(value), lease } };
}

function deleteOp(key: string): IRequestOp {
  return { request_delete_range: { key: Buffer.from(key) } };
}
