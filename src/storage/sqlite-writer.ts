import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BerthError, type BerthErrorCode, ERROR_CODES } from '../common/index.js';
import type { WriterInit, WriterReply, WriterRequest } from './sqlite-writer-protocol.js';
import type { RegistryChange } from './types.js';

interface Pending {
  resolve(rows: number): void;
  reject(error: BerthError): void;
}

/**
 * The main-thread side of the writer thread: posts batches, matches replies,
 * and keeps the process alive only while a write is in flight. A writer
 * thread that dies fails what it had and is started again for the next batch.
 *
 * A thread with nothing to write for `idleStopMs` closes its connection and
 * ends; the next batch starts another. Its isolate and SQLite were about 10
 * of an idle daemon's 80 MiB (issue 20), and a node agent is idle most of
 * its life. A batch posted after such a pause waits for the new thread (about
 * 50 ms), which is why SqliteStorage writes that one batch on its own
 * connection and only starts the thread (`threadRunning` tells it).
 */
export class SqliteWriter {
  readonly #init: WriterInit;
  readonly #idleStopMs: number | false;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #nextId = 1;

  constructor(init: WriterInit, idleStopMs: number | false = false) {
    this.#init = init;
    this.#idleStopMs = idleStopMs;
  }

  /** A writer thread exists now (it is started by the first batch after an idle stop). */
  get threadRunning(): boolean {
    return this.#worker !== undefined;
  }

  /** Starts the thread and waits until it runs (so a broken install fails at start, not at the first write). */
  async start(): Promise<void> {
    await this.#request({ kind: 'close', id: 0 });
  }

  /** Applies one batch in one transaction; resolves with the rows SQLite changed. */
  apply(changes: readonly RegistryChange[]): Promise<number> {
    return this.#request({ kind: 'apply', id: 0, changesJson: JSON.stringify(changes) });
  }

  /** Closes the connection; the thread ends. Waits for writes already posted. */
  async stop(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    if (worker === undefined) return;
    await this.#request({ kind: 'close', id: 0 }).catch(() => undefined);
    this.#worker = undefined;
    await worker.terminate();
  }

  /** Drops the connection, so the next batch opens the file again (after the file was replaced). */
  reconnect(): void {
    if (this.#worker !== undefined) void this.#request({ kind: 'close', id: 0 }).catch(() => undefined);
  }

  #request(request: WriterRequest): Promise<number> {
    clearTimeout(this.#idleTimer);
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<number>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  /** Throws when the thread's module is missing (a broken install), without starting the thread. */
  checkInstalled(): void {
    const path = fileURLToPath(workerModule());
    if (!existsSync(path)) {
      throw new BerthError(
        'BERTH_STORAGE_FAILED',
        `the SQLite writer thread's module ${path} is missing: berth's install is incomplete; install it again`,
      );
    }
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(workerModule(), { workerData: this.#init });
    worker.unref();
    worker.on('message', (reply: WriterReply) => this.#settle(reply));
    worker.on('error', (err) => this.#failAll(worker, `the SQLite writer thread failed: ${err.message}`));
    worker.on('exit', (code) => this.#failAll(worker, `the SQLite writer thread exited (code ${code})`));
    this.#worker = worker;
    return worker;
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) {
      this.#worker?.unref();
      this.#armIdleStop();
    }
    if (reply.ok) {
      pending.resolve(reply.rows);
      return;
    }
    const { message, code } = reply.error;
    if (code !== undefined && Object.hasOwn(ERROR_CODES, code)) {
      pending.reject(new BerthError(code as BerthErrorCode, message));
      return;
    }
    const suffix = code === undefined ? '' : ` (${code})`;
    pending.reject(
      new BerthError(
        'BERTH_STORAGE_FAILED',
        `failed to write dynamic plugin registry changes to ${this.#init.path}: ${message}${suffix}`,
        { details: { path: this.#init.path, ...(code === undefined ? {} : { sqliteCode: code }) } },
      ),
    );
  }

  #armIdleStop(): void {
    if (this.#idleStopMs === false || this.#worker === undefined) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => void this.#retire(), this.#idleStopMs);
    this.#idleTimer.unref();
  }

  /** Ends an idle thread: its connection closed first (as at stop), then the thread, unless a batch came meanwhile. */
  async #retire(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined || this.#pending.size > 0) return;
    try {
      await this.#request({ kind: 'close', id: 0 });
    } catch {
      return; // the thread failed: #failAll has dealt with it
    }
    if (this.#worker !== worker || this.#pending.size > 0) return;
    clearTimeout(this.#idleTimer);
    this.#worker = undefined;
    // Its exit is ours, not a failure to report to batches of a thread started after it.
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    worker.on('error', () => {});
    await worker.terminate();
  }

  #failAll(worker: Worker, message: string): void {
    if (this.#worker === worker) this.#worker = undefined;
    const failed = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of failed)
      p.reject(new BerthError('BERTH_STORAGE_FAILED', message, { details: { path: this.#init.path } }));
  }
}

/** The writer thread's entry, with this module's extension: .js when compiled, .ts under tsx. */
function workerModule(): URL {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./sqlite-writer-worker${ext}`, import.meta.url);
}
