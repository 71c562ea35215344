/**
 * One DRA plugin instance's gRPC connection, created right after
 * registration and watched for as long as the instance is registered (kubelet
 * 1.34: Connect() at register, conn begin/end events set `connected`, and a
 * dropped connection is connected again so a restarted plugin is noticed).
 */
import { Client, type ClientOptions, connectivityState, credentials } from '@grpc/grpc-js';
import { unixTarget } from '../../registration/index.js';

export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'transient-failure' | 'shutdown';

const STATE_NAMES: Record<number, ConnectionState> = {
  [connectivityState.IDLE]: 'idle',
  [connectivityState.CONNECTING]: 'connecting',
  [connectivityState.READY]: 'ready',
  [connectivityState.TRANSIENT_FAILURE]: 'transient-failure',
  [connectivityState.SHUTDOWN]: 'shutdown',
};

/** Re-arm the watch this often even when nothing changes (grpc-js needs a finite deadline). */
const WATCH_SLICE_MS = 60 * 60_000;

const CLIENT_OPTIONS: ClientOptions = {
  // Reconnect quickly after a plugin restart: the default backoff starts at 1 s and grows to 120 s.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 5_000,
};

export class DraConnection {
  readonly client: Client;
  #state: ConnectionState;
  #closed = false;
  readonly #onChange: (state: ConnectionState) => void;

  constructor(endpoint: string, onChange: (state: ConnectionState) => void) {
    this.#onChange = onChange;
    this.client = new Client(unixTarget(endpoint), credentials.createInsecure(), CLIENT_OPTIONS);
    const channel = this.client.getChannel();
    // `true` starts connecting now, so a missing plugin is noticed early.
    this.#state = STATE_NAMES[channel.getConnectivityState(true)] ?? 'idle';
    this.#watch();
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get connected(): boolean {
    return this.#state === 'ready';
  }

  #watch(): void {
    if (this.#closed) return;
    const channel = this.client.getChannel();
    const current = channel.getConnectivityState(false);
    channel.watchConnectivityState(current, Date.now() + WATCH_SLICE_MS, (err) => {
      if (this.#closed) return;
      // No error: the state changed. An error only means the slice ended.
      if (err === undefined) {
        // An idle channel (connection dropped) is asked to connect again.
        const raw = channel.getConnectivityState(true);
        const next = STATE_NAMES[raw] ?? 'idle';
        if (next !== this.#state) {
          this.#state = next;
          this.#onChange(next);
        }
      }
      this.#watch();
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#state = 'shutdown';
    this.client.close();
  }
}
