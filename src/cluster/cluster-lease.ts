import type { Etcd3 } from 'etcd3';
import { type Clock, errorMessage, type Logger, sleep } from '../common/index.js';
import type { ClusterWriterEvent, LeaseState } from './cluster-events.js';

export interface ClusterLeaseOptions {
  client: Etcd3;
  ttlSeconds: number;
  callTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  onEvent: (event: ClusterWriterEvent) => void;
  /** The lease is gone (expired, TTL 0): the publisher re-grants and republishes everything. */
  onLost: () => void;
  /** Renewals work again after failing: the publisher checks that etcd still holds what it published. */
  onRecovered: () => void;
  /** True while the publisher owes etcd a full sync (the lease is not 'held' before it is done). */
  syncPending: () => boolean;
}

/**
 * The cluster writer's lease: granted on demand, renewed every TTL/3 on a
 * short keepalive stream of its own, reported as a LeaseState, and revoked
 * or released at stop. Publishing (cluster-writer.ts) writes under
 * `current` and learns from `onLost` when it has to start over.
 */
export class ClusterLease {
  readonly #o: ClusterLeaseOptions;
  #current: string | undefined;
  #state: LeaseState = 'none';
  #lastRenewal = 0;
  #renewFailing = false;

  constructor(options: ClusterLeaseOptions) {
    this.#o = options;
  }

  /** The lease held now (decimal), if any. */
  get current(): string | undefined {
    return this.#current;
  }

  get state(): LeaseState {
    return this.#state;
  }

  /** Grants a new lease and holds it. */
  async grant(): Promise<string> {
    const { client, ttlSeconds, callTimeoutMs, clock } = this.#o;
    const response = await client.leaseClient.leaseGrant(
      { TTL: ttlSeconds },
      { deadline: Date.now() + callTimeoutMs },
    );
    this.#lastRenewal = clock.now();
    this.#renewFailing = false;
    this.#current = response.ID;
    return response.ID;
  }

  /** Lets go of the held lease without revoking it (revoke it separately with revokeQuietly). */
  forget(state?: LeaseState): void {
    this.#current = undefined;
    if (state !== undefined) this.setState(state);
  }

  /** Stop: revoke (every entry vanishes in one revision) or release (entries expire after the TTL). */
  async end(mode: 'revoke' | 'release'): Promise<void> {
    const lease = this.#current;
    this.#current = undefined;
    if (lease === undefined) return;
    if (mode === 'release') {
      this.setState('released', lease);
      return;
    }
    try {
      await this.#o.client.leaseClient.leaseRevoke(
        { ID: lease },
        { deadline: Date.now() + this.#o.callTimeoutMs },
      );
      this.setState('revoked', lease);
    } catch (err) {
      this.#o.logger.warn(
        { err: errorMessage(err), lease },
        'revoking the cluster lease failed; entries expire after the TTL',
      );
    }
  }

  async revokeQuietly(lease: string): Promise<void> {
    try {
      await this.#o.client.leaseClient.leaseRevoke(
        { ID: lease },
        { deadline: Date.now() + this.#o.callTimeoutMs },
      );
    } catch (err) {
      // Not found means it already expired, which is what we wanted.
      if (!/not found/i.test(errorMessage(err))) {
        this.#o.logger.warn(
          { err: errorMessage(err), lease },
          'could not revoke an old cluster lease; it expires by itself',
        );
      }
    }
  }

  /** The held lease is gone: report it and let the publisher start over. */
  lost(reason: string): void {
    const lease = this.#current;
    if (lease === undefined) return;
    this.#o.logger.warn({ lease, reason }, 'cluster lease lost; granting a new one and republishing');
    this.#current = undefined;
    this.setState('lost', lease);
    this.#o.onLost();
  }

  setState(state: LeaseState, lease?: string): void {
    if (this.#state === state) return;
    this.#state = state;
    const at = this.#o.clock.now();
    this.#o.onEvent(lease === undefined ? { type: 'lease', at, state } : { type: 'lease', at, state, lease });
  }

  /** Renews every TTL/3 on a short stream of its own; a TTL-0 answer means the lease is gone. */
  async renewLoop(signal: AbortSignal): Promise<void> {
    const { clock, ttlSeconds, logger } = this.#o;
    const interval = Math.max(200, Math.floor((ttlSeconds * 1000) / 3));
    // After a failed renewal, try again soon (likely through another member) instead of a full interval later.
    const retry = Math.min(interval, 250);
    while (!signal.aborted) {
      try {
        await sleep(clock, this.#renewFailing ? retry : interval, signal);
      } catch {
        return;
      }
      const lease = this.#current;
      // Renew whenever a lease is held, even while a full sync is pending, so a slow sync cannot let it lapse.
      if (lease === undefined) continue;
      try {
        const ttl = await this.#keepAliveOnce(lease, interval);
        if (lease !== this.#current) continue;
        if (ttl <= 0) {
          this.lost('etcd answered TTL 0 (expired while unreachable)');
          continue;
        }
        this.#lastRenewal = clock.now();
        if (this.#renewFailing) {
          // Back after trouble: make sure what etcd holds is still what we published.
          this.#renewFailing = false;
          this.#o.onRecovered();
        }
        if (this.#state !== 'held' && !this.#o.syncPending()) this.setState('held', lease);
      } catch (err) {
        if (signal.aborted || lease !== this.#current) continue;
        if (!this.#renewFailing)
          logger.warn({ err: errorMessage(err), lease }, 'cluster lease renewal failed');
        this.#renewFailing = true;
        if (clock.now() - this.#lastRenewal > ttlSeconds * 1000) this.setState('unknown', lease);
      }
    }
  }

  async #keepAliveOnce(lease: string, timeoutMs: number): Promise<number> {
    const stream = await this.#o.client.leaseClient.leaseKeepAlive({ deadline: Date.now() + timeoutMs });
    try {
      return await new Promise<number>((resolve, reject) => {
        stream.on('data', (response: { TTL: string }) => resolve(Number(response.TTL)));
        stream.on('error', (err: Error) => reject(err));
        stream.on('end', () => reject(new Error('keepalive stream ended without an answer')));
        stream.write({ ID: lease });
      });
    } finally {
      stream.end();
    }
  }
}
