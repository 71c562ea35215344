import type { PluginCallContext, PluginHandler, RegisterContext } from '../handlers/index.js';

/**
 * A PluginHandler for tests: records every call ("validate N", "register N",
 * "deregister N"), can be told to fail or to be slow, and checks the
 * contract's ordering per plugin name: calls for one name never overlap, and
 * a name's calls follow validate -> register -> deregister.
 */
export interface RecordingHandlerBehaviour {
  /** validatePlugin throws this message. */
  failValidate?: string;
  /** validatePlugin waits for this promise first (the attempt is then mid-handshake, not yet in the actual state). */
  holdValidate?: Promise<void>;
  /** registerPlugin throws this message... */
  failRegister?: string;
  /** ...only this many more times (default: every time while failRegister is set). */
  failRegisterTimes?: number;
  /** Each call takes this many real milliseconds (widens windows for interleaving checks). */
  delayMs?: number;
  /** deRegisterPlugin waits for this promise before returning. */
  holdDeregister?: Promise<void>;
}

export interface RecordedCall {
  op: 'validate' | 'register' | 'deregister';
  name: string;
  endpoint: string;
  versions?: string[];
  context: PluginCallContext | RegisterContext;
}

export class RecordingHandler implements PluginHandler {
  readonly behaviour: RecordingHandlerBehaviour;
  events: string[] = [];
  readonly calls: RecordedCall[] = [];
  /** Ordering-contract breaches seen; a correct caller leaves this empty. */
  readonly violations: string[] = [];
  readonly #inFlight = new Set<string>();
  /** Per name: what the last completed successful call was. */
  readonly #state = new Map<string, 'validated' | 'registered' | 'deregistered'>();
  readonly #listeners = new Set<() => void>();

  constructor(behaviour: RecordingHandlerBehaviour = {}) {
    this.behaviour = { ...behaviour };
  }

  resetEvents(): void {
    this.events = [];
  }

  /** Resolves once `predicate(events)` holds (checked as every call starts and ends). */
  waitForEvents(predicate: (events: readonly string[]) => boolean): Promise<void> {
    if (predicate(this.events)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!predicate(this.events)) return;
        this.#listeners.delete(check);
        resolve();
      };
      this.#listeners.add(check);
    });
  }

  async validatePlugin(
    name: string,
    endpoint: string,
    versions: string[],
    context: PluginCallContext,
  ): Promise<void> {
    await this.#call({ op: 'validate', name, endpoint, versions: [...versions], context }, async () => {
      await this.behaviour.holdValidate;
      if (this.behaviour.failValidate !== undefined) throw new Error(this.behaviour.failValidate);
      this.#state.set(name, 'validated');
    });
  }

  async registerPlugin(
    name: string,
    endpoint: string,
    versions: string[],
    context: RegisterContext,
  ): Promise<void> {
    await this.#call({ op: 'register', name, endpoint, versions: [...versions], context }, () => {
      if (this.#state.get(name) !== 'validated') {
        this.violations.push(
          `register ${name} without a preceding validate (state ${this.#state.get(name)})`,
        );
      }
      const { failRegister, failRegisterTimes } = this.behaviour;
      if (failRegister !== undefined && (failRegisterTimes === undefined || failRegisterTimes > 0)) {
        if (failRegisterTimes !== undefined) this.behaviour.failRegisterTimes = failRegisterTimes - 1;
        this.#state.delete(name);
        throw new Error(failRegister);
      }
      this.#state.set(name, 'registered');
    });
  }

  async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext): Promise<void> {
    await this.#call({ op: 'deregister', name, endpoint, context }, async () => {
      if (this.#state.get(name) !== 'registered') {
        this.violations.push(`deregister ${name} while not registered (state ${this.#state.get(name)})`);
      }
      await this.behaviour.holdDeregister;
      this.#state.set(name, 'deregistered');
    });
  }

  /** Names whose last successful call was a register. */
  registeredNames(): string[] {
    return [...this.#state].filter(([, s]) => s === 'registered').map(([n]) => n);
  }

  async #call(call: RecordedCall, body: () => void | Promise<void>): Promise<void> {
    if (this.#inFlight.has(call.name)) {
      this.violations.push(`${call.op} ${call.name} overlapped another call for the same name`);
    }
    this.#inFlight.add(call.name);
    this.calls.push(call);
    this.events.push(`${call.op} ${call.name}`);
    this.#notify();
    try {
      const delay = this.behaviour.delayMs ?? 0;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      await body();
    } finally {
      this.#inFlight.delete(call.name);
      this.#notify();
    }
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
