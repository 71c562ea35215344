import type { Clock } from '../common/index.js';
import type { SlotBudgets } from './executor-options.js';
import { type HoldBudget, Slots } from './slots.js';

/**
 * Where a registration attempt waits, and for how long it may hold what it
 * got. The kubelet runs every attempt in its own goroutine with no global
 * bound, so one plugin that stalls delays nobody else; berth bounds the
 * attempts in flight (a storm of 5,000 sockets queues instead of thrashing),
 * and these lanes keep that bound from turning a few stalling plugins into a
 * wall in front of every other plugin:
 *
 * - the handshake (connect, HTTP/2, GetInfo, validation) of a socket holds
 *   one of `main`'s slots for at most `handshakeMs`;
 * - the handler's calls and the final Notify hold one slot of the plugin
 *   type's own lane for at most `handlerMs`, so 70 hanging CSI drivers take
 *   nothing from device plugins or the example type;
 * - a socket whose last attempt overran a budget is an offender: its next
 *   attempt runs in the small `slow` lane (one slot for the whole attempt,
 *   at most `slowMs`), behind nobody and in front of nobody fresh.
 *
 * An attempt past its budget gives the slot back and carries on without one,
 * up to its own (the kubelet's) deadlines: berth never cuts a plugin shorter
 * than the kubelet would. Those carrying on are at most one per socket, as in
 * the kubelet.
 */
export interface LaneUsage {
  main: { held: number; waiting: number };
  slow: { held: number; waiting: number };
  handlers: Record<string, { held: number; waiting: number }>;
  offenders: number;
}

export class RegistrationLanes {
  readonly main: Slots;
  readonly slow: Slots;
  readonly budgets: Readonly<SlotBudgets>;
  readonly #clock: Clock;
  /** Per plugin type; created only for types that have a handler, so plugins cannot grow it. */
  readonly #byType = new Map<string, Slots>();
  /** Socket path -> the generation (uuid) whose last attempt overran a budget. */
  readonly #offenders = new Map<string, string>();

  constructor(clock: Clock, mainSlots: number, budgets: Readonly<SlotBudgets>) {
    this.#clock = clock;
    this.budgets = budgets;
    this.main = new Slots(mainSlots);
    this.slow = new Slots(budgets.slowSlots);
  }

  /** The lane of an attempt's handshake: `slow` for an offender (its last attempt overran), else `main`. */
  handshakeLane(offender: boolean): Slots {
    return offender ? this.slow : this.main;
  }

  /** The lane of a plugin type's handler calls (the type must have a handler). */
  handlerLane(type: string): Slots {
    let lane = this.#byType.get(type);
    if (lane === undefined) {
      lane = new Slots(this.budgets.handlerSlots);
      this.#byType.set(type, lane);
    }
    return lane;
  }

  hold(ms: number, onOverrun: () => void): HoldBudget {
    return { clock: this.#clock, ms, onOverrun };
  }

  isOffender(socketPath: string, generation: string): boolean {
    return this.#offenders.get(socketPath) === generation;
  }

  /** Records how an attempt of this socket generation went: an overrun makes it an offender. */
  record(socketPath: string, generation: string, overran: boolean): void {
    if (overran) this.#offenders.set(socketPath, generation);
    else this.#offenders.delete(socketPath);
  }

  forget(socketPath: string): void {
    this.#offenders.delete(socketPath);
  }

  /** Held and waiting slots per lane (handler lanes by plugin type), and the offenders. */
  usage(): LaneUsage {
    const of = (slots: Slots) => ({ held: slots.held, waiting: slots.waiting });
    const handlers: Record<string, { held: number; waiting: number }> = {};
    for (const [type, lane] of this.#byType) handlers[type] = of(lane);
    return { main: of(this.main), slow: of(this.slow), handlers, offenders: this.#offenders.size };
  }

  /** Sockets whose next attempt goes to the slow lane. */
  get offenders(): number {
    return this.#offenders.size;
  }
}
