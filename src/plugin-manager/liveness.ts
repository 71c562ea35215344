import type { PluginInfo } from '../cache/types.js';
import {
  AbortScope,
  type BackoffSetting,
  BerthError,
  type Clock,
  type ClockTimer,
  LifecycleComponent,
  type LifecycleState,
  type Logger,
  nextBackoffMs,
} from '../common/index.js';
import { openHeldConnection, probeConnect } from '../registration/registrar.js';
import type { DialRegistration, HeldConnection } from '../registration/types.js';
import { DEFAULT_LIVENESS, RECOVERY_MAX_PERIODS, recoveryBackoff } from './liveness-options.js';
import { pingSliceCount, pingSliceShare } from './ping-slices.js';
import type { LivenessOptions } from './types.js';

export { DEFAULT_LIVENESS, RECOVERY_MAX_PERIODS };

/** Connections opened per event-loop turn when held-back ones are opened together (about 5 ms of connects). */
const CONNECTS_PER_TURN = 64;

export interface LivenessProberOptions extends LivenessOptions {
  clock: Clock;
  logger: Logger;
  /** Used for recovery probes of dead sockets (a fresh dial and GetInfo). */
  dial: DialRegistration;
  /** Sockets with an operation running are left alone (their registration is in flux). */
  isBusy: (socketPath: string) => boolean;
  /** The plugin is gone: its connection closed and the socket refuses, or `failureThreshold` pings failed. */
  onDead: (plugin: PluginInfo, error: BerthError, failures: number) => void;
  /** Sockets declared dead whose file is still there: probed for recovery. */
  deadSockets?: () => string[];
  /** Between recovery probes of a dead socket. Default: recoveryBackoff(periodMs), one period doubling to 32. */
  recoveryBackoff?: BackoffSetting;
  /** A dead socket answered GetInfo again. */
  onAlive?: (socketPath: string) => void;
  /**
   * A recovery probe of a dead socket failed: why, now. The reason can change
   * while the plugin stays dead (a stopped plugin that is then killed stops
   * timing out and starts refusing), and its status must follow.
   */
  onStillDead?: (socketPath: string, error: BerthError) => void;
  /**
   * True while registrations are running: a new plugin's connection then
   * waits, so a storm's handshakes do not share the plugins' accept queues
   * and berth's event loop with liveness connects. It is opened by
   * `connectWaiting()` (the plugin manager calls it when the last operation
   * settles) or at the next period, whichever comes first.
   */
  deferConnects?: () => boolean;
}

export interface LivenessProber {
  readonly state: LifecycleState;
  start(signal?: AbortSignal): Promise<void>;
  /** Stops the timer, closes every held connection and waits for probes in flight. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** Holds a connection to a registered plugin (replacing one of an older generation). */
  watch(plugin: PluginInfo): void;
  /**
   * The handshake's connection of a plugin about to be watched: `watch` of
   * that generation uses it instead of opening one. One left unclaimed for a
   * period is closed.
   */
  adopt(socketPath: string, uuid: string, connection: HeldConnection): void;
  /** Lets go of a plugin (deregistered); only the given generation when `uuid` is set. */
  unwatch(socketPath: string, uuid?: string): void;
  /** Sockets watched right now. */
  watched(): string[];
  /** Opens the connections that `deferConnects` held back, a bounded number per event-loop turn. */
  connectWaiting(): void;
  /** Pings every watched plugin now and probes dead sockets due for recovery (tests; the timer pings a bounded share). */
  probeAll(): Promise<void>;
  /** When a dead socket's next recovery probe runs (undefined: none scheduled). */
  nextRecoveryProbe(socketPath: string): number | undefined;
}

/**
 * Liveness without polling cost (the kubelet's DRA health monitor does the
 * same for service sockets, kubernetes#131073): one idle HTTP/2 connection is
 * held to each registered plugin. When it closes, the socket is tried once
 * more; if nobody listens there (the plugin crashed and its file lingers) the
 * plugin is dead at once, instead of after N probe periods. A plugin that is
 * stopped (SIGSTOP) or wedged keeps its connection open but stops answering:
 * a keepalive ping finds it, and after `failureThreshold` consecutive failed
 * pings it is dead. Pings go out at most `pingsPerPeriod` per period,
 * round-robin, so a period costs the same with 100 or 5,000 plugins.
 *
 * A dead socket whose file lingers is probed for recovery with a fresh dial
 * and GetInfo on a doubling interval (1 to 32 periods), as the upstream
 * monitor does; when it answers, `onAlive` is called.
 */
export function createLivenessProber(options: LivenessProberOptions): LivenessProber {
  for (const key of ['periodMs', 'timeoutMs', 'failureThreshold', 'pingsPerPeriod'] as const) {
    const value = options[key] ?? DEFAULT_LIVENESS[key];
    if (!Number.isFinite(value) || value <= 0) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `plugin manager: liveness.${key} must be a positive number, got ${String(value)}`,
      );
    }
  }
  return new Prober(options);
}

interface Watched {
  plugin: PluginInfo;
  session: HeldConnection | undefined;
  failures: number;
  pinging: boolean;
  /** Position in the round-robin array. */
  index: number;
  closed: boolean;
}

class Prober extends LifecycleComponent implements LivenessProber {
  readonly #o: LivenessProberOptions;
  readonly #pingsPerPeriod: number;
  readonly #recoveryBackoff: BackoffSetting;
  readonly #watched = new Map<string, Watched>();
  /** Round-robin order of the keepalive pings. */
  readonly #ring: Watched[] = [];
  #cursor = 0;
  /** Per dead socket: when to probe it next, the interval after that, and whether a probe is out now. */
  readonly #recovery = new Map<string, { nextAt: number; intervalMs: number; probing?: boolean }>();
  readonly #inFlight = new Set<Promise<void>>();
  /** Handshake connections handed over for a generation not watched yet (adopt). */
  readonly #adopted = new Map<string, { uuid: string; connection: HeldConnection; at: number }>();
  /** Watched plugins whose connection is not open yet (deferConnects), oldest first, from #waitingHead. */
  #waiting: Watched[] = [];
  #waitingHead = 0;
  #draining = false;
  #timer: ClockTimer | undefined;
  /** The next slice of this period's pings (ping-slices.ts). */
  #sliceTimer: ClockTimer | undefined;
  /** One timer per slice of pings, judging them together (real time, as a ping's deadline is). */
  readonly #sweeps = new Set<NodeJS.Timeout>();
  /** A signal per recovery probe, without a listener per probe on the lifecycle's signal. */
  readonly #probes: AbortScope;

  constructor(options: LivenessProberOptions) {
    super();
    this.#o = options;
    this.#pingsPerPeriod = options.pingsPerPeriod ?? DEFAULT_LIVENESS.pingsPerPeriod;
    this.#recoveryBackoff = options.recoveryBackoff ?? recoveryBackoff(options.periodMs);
    this.#probes = new AbortScope(this.lifecycleSignal);
  }

  protected override onStart(): Promise<void> | void {
    return this.#arm();
  }

  protected override async onStop(): Promise<void> {
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#cancelSlices();
    for (const sweep of this.#sweeps) clearTimeout(sweep);
    this.#sweeps.clear();
    for (const socketPath of [...this.#watched.keys()]) this.unwatch(socketPath);
    for (const { connection } of this.#adopted.values()) connection.destroy();
    this.#adopted.clear();
    this.#waiting = [];
    this.#waitingHead = 0;
    await Promise.all([...this.#inFlight]);
  }

  get #stopped(): boolean {
    return this.lifecycleSignal.aborted;
  }

  watch(plugin: PluginInfo): void {
    if (this.#stopped) return;
    const existing = this.#watched.get(plugin.socketPath);
    if (existing?.plugin.uuid === plugin.uuid) return;
    if (existing) this.unwatch(plugin.socketPath);
    const entry: Watched = {
      plugin,
      session: undefined,
      failures: 0,
      pinging: false,
      index: -1,
      closed: false,
    };
    entry.index = this.#ring.push(entry) - 1;
    this.#watched.set(plugin.socketPath, entry);
    this.#recovery.delete(plugin.socketPath);
    const adopted = this.#adopted.get(plugin.socketPath);
    this.#adopted.delete(plugin.socketPath);
    if (adopted?.uuid === plugin.uuid) {
      this.#hold(entry, adopted.connection);
      return;
    }
    adopted?.connection.destroy();
    this.#waiting.push(entry);
    if (this.#o.deferConnects?.() !== true) this.connectWaiting();
  }

  adopt(socketPath: string, uuid: string, connection: HeldConnection): void {
    if (this.#stopped) {
      connection.destroy();
      return;
    }
    this.#adopted.get(socketPath)?.connection.destroy();
    this.#adopted.set(socketPath, { uuid, connection, at: this.#o.clock.now() });
  }

  /** Closes handed-over connections nobody claimed within a period (their registration did not go through). */
  #dropUnclaimed(): void {
    if (this.#adopted.size === 0) return;
    const before = this.#o.clock.now() - this.#o.periodMs;
    for (const [socketPath, { connection, at }] of this.#adopted) {
      if (at > before) continue;
      this.#adopted.delete(socketPath);
      connection.destroy();
    }
  }

  unwatch(socketPath: string, uuid?: string): void {
    const entry = this.#watched.get(socketPath);
    if (entry === undefined || (uuid !== undefined && entry.plugin.uuid !== uuid)) return;
    this.#watched.delete(socketPath);
    entry.closed = true;
    // Swap-remove from the ring: O(1).
    const last = this.#ring.pop() as Watched;
    if (last !== entry) {
      this.#ring[entry.index] = last;
      last.index = entry.index;
    }
    entry.session?.destroy();
    entry.session = undefined;
  }

  watched(): string[] {
    return [...this.#watched.keys()];
  }

  connectWaiting(): void {
    if (this.#draining) return;
    this.#draining = true;
    const turn = () => {
      let opened = 0;
      while (this.#waitingHead < this.#waiting.length && opened < CONNECTS_PER_TURN && !this.#stopped) {
        const entry = this.#waiting[this.#waitingHead++] as Watched;
        if (entry.closed || entry.session !== undefined) continue;
        this.#connect(entry);
        opened++;
      }
      if (this.#waitingHead < this.#waiting.length && !this.#stopped) {
        setImmediate(turn);
        return;
      }
      this.#waiting = [];
      this.#waitingHead = 0;
      this.#draining = false;
    };
    turn();
  }

  async probeAll(): Promise<void> {
    await Promise.all([
      ...[...this.#watched.values()].map((entry) => this.#ping(entry)),
      ...this.#dueForRecovery().map((path) => this.#probeRecovery(path)),
    ]);
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#tick();
      this.#arm();
    }, this.#o.periodMs);
  }

  /**
   * One period: a bounded share of keepalive pings, spread over the period
   * in slices (ping-slices.ts), and the recovery probes that are due. A
   * slice's pings are sent together and judged together by one timer
   * `timeoutMs` later, so a ping costs a write and a read, with no promise or
   * timer of its own (at 5,000 plugins the per-ping promises and timers were
   * a third of an idle node's CPU).
   */
  #tick(): void {
    this.connectWaiting(); // a period is the longest a new plugin's connection waits
    this.#dropUnclaimed();
    // A slice of the last period that is somehow still due is dropped; the round-robin goes on from where it stopped.
    this.#cancelSlices();
    const budget = Math.min(this.#pingsPerPeriod, this.#ring.length);
    const slices = pingSliceCount(budget, this.#o.periodMs);
    this.#pingSlice(pingSliceShare(budget, slices, 0));
    if (slices > 1) this.#scheduleSlice(1, slices, budget, this.#o.periodMs / slices);
    for (const path of this.#dueForRecovery()) this.#track(this.#probeRecovery(path));
  }

  #scheduleSlice(index: number, slices: number, budget: number, intervalMs: number): void {
    this.#sliceTimer = this.#o.clock.setTimeout(() => {
      this.#sliceTimer = undefined;
      if (this.#stopped) return;
      this.#pingSlice(pingSliceShare(budget, slices, index));
      if (index + 1 < slices) this.#scheduleSlice(index + 1, slices, budget, intervalMs);
    }, intervalMs);
  }

  #cancelSlices(): void {
    if (this.#sliceTimer) this.#o.clock.clearTimeout(this.#sliceTimer);
    this.#sliceTimer = undefined;
  }

  /** Pings the next `count` plugins of the ring that can be pinged now, and judges them together later. */
  #pingSlice(count: number): void {
    const sent: Watched[] = [];
    for (let i = 0; i < count; i++) {
      if (this.#cursor >= this.#ring.length) this.#cursor = 0;
      const entry = this.#ring[this.#cursor++];
      if (entry === undefined || !this.#pingable(entry)) continue;
      entry.pinging = true;
      entry.session?.sendPing();
      sent.push(entry);
    }
    if (sent.length === 0) return;
    const sweep = setTimeout(() => {
      this.#sweeps.delete(sweep);
      this.#judge(sent);
    }, this.#o.timeoutMs);
    sweep.unref();
    this.#sweeps.add(sweep);
  }

  /** A slice's pings, `timeoutMs` after they went out. */
  #judge(sent: readonly Watched[]): void {
    if (this.#stopped) return;
    let answered = 0;
    for (const entry of sent) {
      entry.pinging = false;
      if (entry.closed || entry.session === undefined) continue; // a lost connection is judged by #onConnectionLost
      const ok = entry.session.answered;
      if (ok) answered += 1;
      this.#pingResult(
        entry,
        ok ? undefined : `no answer to a keepalive ping within ${this.#o.timeoutMs} ms`,
      );
    }
    this.#o.logger.debug({ sent: sent.length, answered }, 'liveness pings judged');
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  #connect(entry: Watched): void {
    this.#hold(entry, openHeldConnection(entry.plugin.socketPath));
  }

  #hold(entry: Watched, session: HeldConnection): void {
    entry.session = session;
    session.onPeerClose(() => {
      if (entry.closed || entry.session !== session) return;
      entry.session = undefined;
      this.#track(this.#onConnectionLost(entry));
    });
  }

  /**
   * The connection closed without us asking. If the socket refuses a new
   * connection, nobody listens there any more: the plugin is dead now. If the
   * file is gone the watcher deregisters it; if it answers, hold a new connection.
   */
  async #onConnectionLost(entry: Watched): Promise<void> {
    const { socketPath } = entry.plugin;
    const failure = await probeConnect(socketPath, this.#o.timeoutMs);
    if (entry.closed || this.#stopped) return;
    if (failure === undefined) {
      this.#connect(entry);
      return;
    }
    if (failure.code === 'ENOENT') return; // the socket file went: the watcher's removal deregisters it
    if (this.#o.isBusy(socketPath)) return;
    this.#declareDead(entry, `its connection closed and the socket refuses new ones: ${failure.message}`, 1);
  }

  /** One keepalive ping within timeoutMs; counts failures of this generation. */
  async #ping(entry: Watched): Promise<void> {
    const session = entry.session;
    if (session === undefined || !this.#pingable(entry)) return;
    entry.pinging = true;
    let error: string | undefined;
    try {
      error = await session.ping(this.#o.timeoutMs);
    } finally {
      entry.pinging = false;
    }
    if (entry.closed || this.#stopped) return;
    this.#pingResult(entry, error);
  }

  /** Not pinged: a ping already out, let go of, its connection lost (#onConnectionLost decides), or an operation running. */
  #pingable(entry: Watched): boolean {
    if (entry.pinging || entry.closed || entry.session === undefined) return false;
    return !this.#o.isBusy(entry.plugin.socketPath);
  }

  /** Counts a ping's outcome for this generation; `failureThreshold` failures in a row make it dead. */
  #pingResult(entry: Watched, error: string | undefined): void {
    if (error === undefined) {
      entry.failures = 0;
      return;
    }
    entry.failures += 1;
    this.#o.logger.debug(
      { socketPath: entry.plugin.socketPath, failures: entry.failures, reason: error },
      `liveness ping of ${entry.plugin.socketPath} failed (${entry.failures}/${this.#o.failureThreshold})`,
    );
    if (entry.failures >= this.#o.failureThreshold) {
      this.#declareDead(
        entry,
        `failed ${entry.failures} consecutive liveness probes; last error: ${error}`,
        entry.failures,
      );
    }
  }

  #declareDead(entry: Watched, reason: string, failures: number): void {
    const { plugin } = entry;
    this.unwatch(plugin.socketPath, plugin.uuid);
    // The first recovery probe is one period away; `berth sockets` shows when.
    const first = nextBackoffMs(this.#recoveryBackoff, 0);
    this.#recovery.set(plugin.socketPath, { nextAt: this.#o.clock.now() + first, intervalMs: first });
    const error = new BerthError(
      'BERTH_LIVENESS_FAILED',
      `plugin ${plugin.name ?? ''} at socket ${plugin.socketPath} ${reason}`,
      { details: { socketPath: plugin.socketPath, failures } },
    );
    this.#o.onDead(plugin, error, failures);
  }

  nextRecoveryProbe(socketPath: string): number | undefined {
    return this.#recovery.get(socketPath)?.nextAt;
  }

  #dueForRecovery(): string[] {
    const deadList = this.#o.deadSockets?.() ?? [];
    if (deadList.length === 0 && this.#recovery.size === 0) return [];
    const dead = new Set(deadList);
    for (const path of this.#recovery.keys()) if (!dead.has(path)) this.#recovery.delete(path);
    const now = this.#o.clock.now();
    const due: string[] = [];
    for (const path of dead) {
      const schedule = this.#recovery.get(path);
      if (schedule === undefined) {
        const first = nextBackoffMs(this.#recoveryBackoff, 0);
        this.#recovery.set(path, { nextAt: now + first, intervalMs: first });
      } else if (now >= schedule.nextAt && schedule.probing !== true) {
        // One probe of a socket at a time: a slow one (timeoutMs longer than a period) is not doubled.
        due.push(path);
      }
    }
    return due;
  }

  #probeRecovery(socketPath: string): Promise<void> {
    return this.#probes.run((signal) => this.#probeRecoveryWith(socketPath, signal));
  }

  async #probeRecoveryWith(socketPath: string, signal: AbortSignal): Promise<void> {
    const schedule = this.#recovery.get(socketPath);
    if (schedule === undefined) return;
    schedule.probing = true;
    let failure: BerthError | undefined;
    try {
      const { dial, timeoutMs } = this.#o;
      const conn = await dial(socketPath, { timeoutMs, signal });
      try {
        await conn.getInfo({ timeoutMs, signal });
      } finally {
        conn.close();
      }
    } catch (err) {
      failure = BerthError.from(err, 'BERTH_DIAL_FAILED');
    } finally {
      schedule.probing = false;
    }
    // Aborted (stopping), or the socket's schedule changed meanwhile (alive again, gone, or a new death).
    if (signal.aborted || this.#recovery.get(socketPath) !== schedule) return;
    if (failure === undefined) {
      this.#recovery.delete(socketPath);
      this.#o.onAlive?.(socketPath);
      return;
    }
    schedule.intervalMs = nextBackoffMs(this.#recoveryBackoff, schedule.intervalMs);
    schedule.nextAt = this.#o.clock.now() + schedule.intervalMs;
    this.#o.logger.debug(
      { socketPath, err: failure, nextInMs: schedule.intervalMs },
      'dead plugin still not answering',
    );
    this.#o.onStillDead?.(socketPath, failure);
  }
}
