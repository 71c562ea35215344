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
 */
export class SqliteWriter {
  readonly #init: WriterInit;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;

  constructor(init: WriterInit) {
    this.#init = init;
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
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<number>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    // The same extension as this module: .js when compiled, .ts under tsx.
    const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const worker = new Worker(new URL(`./sqlite-writer-worker${ext}`, import.meta.url), {
      workerData: this.#init,
    });
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
    if (this.#pending.size === 0) this.#worker?.unref();
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

  #failAll(worker: Worker, message: string): void {
    if (this.#worker === worker) this.#worker = undefined;
    const failed = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of failed)
      p.reject(new BerthError('BERTH_STORAGE_FAILED', message, { details: { path: this.#init.path } }));
  }
}
