import type { Clock, ClockTimer } from '../common/index.js';
import type { SystemdNotifier } from './systemd-notify.js';

/** What the service manager is told, read from the daemon on each tick. */
export interface ServiceState {
  ready: boolean;
  /** Why it is not ready (what /readyz says). */
  problem?: string;
  plugins: number;
}

export interface ServiceStatusOptions {
  notifier: SystemdNotifier;
  clock: Clock;
  state(): ServiceState;
  /** How often readiness and the status line are checked when no watchdog asks for more. */
  pollMs?: number;
}

/** Readiness and the status line are looked at this often (the watchdog may tick faster). */
export const SERVICE_STATUS_POLL_MS = 1000;

export interface ServiceStatus {
  /** Checks now (the daemon has just started). */
  update(): void;
  /** STOPPING=1; later ticks stop. */
  stopping(): void;
  close(): void;
}

/**
 * Keeps systemd told: READY=1 the first time the daemon is ready (when
 * /readyz would answer 200), a STATUS= line whenever it changes ("ready: 12
 * plugins registered", "not ready: ..."), WATCHDOG=1 every half
 * WATCHDOG_USEC while the event loop runs, and STOPPING=1 on shutdown.
 */
export function startServiceStatus(options: ServiceStatusOptions): ServiceStatus {
  const { notifier, clock } = options;
  let readySent = false;
  let lastStatus = '';
  let timer: ClockTimer | undefined;
  let done = false;
  const watchdog = notifier.watchdogIntervalMs;
  const period = Math.min(options.pollMs ?? SERVICE_STATUS_POLL_MS, watchdog ?? Number.POSITIVE_INFINITY);

  const update = () => {
    if (done) return;
    const state = options.state();
    const status = state.ready
      ? `ready: ${state.plugins} plugin${state.plugins === 1 ? '' : 's'} registered`
      : `not ready: ${state.problem ?? 'starting'}`;
    const fields: Record<string, string> = {};
    if (state.ready && !readySent) {
      readySent = true;
      fields.READY = '1';
    }
    if (status !== lastStatus) {
      lastStatus = status;
      fields.STATUS = status;
    }
    if (Object.keys(fields).length > 0) notifier.notify(fields);
  };
  let lastPing = 0;
  const tick = () => {
    timer = undefined;
    if (done) return;
    update();
    if (watchdog !== undefined && clock.now() - lastPing >= watchdog - period / 2) {
      lastPing = clock.now();
      notifier.notify({ WATCHDOG: '1' });
    }
    schedule();
  };
  const schedule = () => {
    if (!notifier.active || done) return;
    timer = clock.setTimeout(tick, period);
    // Do not keep the process alive for this alone.
    (timer as { handle?: NodeJS.Timeout }).handle?.unref?.();
  };
  if (watchdog !== undefined) {
    lastPing = clock.now();
    notifier.notify({ WATCHDOG: '1' });
  }
  schedule();
  return {
    update,
    stopping() {
      if (done) return;
      done = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      notifier.notify({ STOPPING: '1', STATUS: 'stopping' });
    },
    close() {
      done = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      notifier.close();
    },
  };
}
