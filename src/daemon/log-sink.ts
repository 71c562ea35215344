import { writeSync } from 'node:fs';

/** Bytes held for a sink that would block (EAGAIN) before further lines are dropped. */
export const LOG_SINK_MAX_PENDING_BYTES = 256 * 1024;
/** How soon a sink that would block tries again. */
const RETRY_MS = 50;

export interface LogSinkOptions {
  maxPendingBytes?: number;
}

/**
 * Writes log lines to a file descriptor (stdout, stderr) and never throws or
 * emits 'error': a daemon must outlive its log sink. A sink that fails
 * (ENOSPC on a full disk, EPIPE on a closed pipe, EIO) loses the line, which
 * is counted (`berth_log_lines_dropped_total`); a sink that would block
 * (EAGAIN on a full non-blocking pipe) gets the lines queued up to
 * LOG_SINK_MAX_PENDING_BYTES and flushed on a timer, and past that bound
 * they are dropped and counted too. Writes are synchronous otherwise, so the
 * last lines before an exit are not lost.
 */
export class LogSink {
  readonly #fd: number;
  readonly #maxPendingBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #dropped = 0;
  #lastError: string | undefined;

  constructor(fd: number, options: LogSinkOptions = {}) {
    this.#fd = fd;
    this.#maxPendingBytes = options.maxPendingBytes ?? LOG_SINK_MAX_PENDING_BYTES;
  }

  /** Lines lost so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Bytes queued for a sink that would block. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The last write error's code (ENOSPC, EPIPE, ...), if any. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Writes one line (its newline included); pino calls this for each log line. */
  write(line: string): boolean {
    const data = Buffer.from(line);
    if (this.#pending.length > 0) {
      this.#enqueue(data);
      return true;
    }
    this.#writeOrQueue(data);
    return true;
  }

  /** Tries to write what is queued once more (the timer does this on its own). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const queued = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    for (let i = 0; i < queued.length; i++) {
      if (this.#pending.length > 0) {
        // Blocked again: keep the rest, in order.
        for (const rest of queued.slice(i)) this.#enqueue(rest);
        return;
      }
      this.#writeOrQueue(queued[i] as Buffer);
    }
  }

  #writeOrQueue(data: Buffer): void {
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += writeSync(this.#fd, data, offset, data.length - offset);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        this.#lastError = code;
        if (code === 'EAGAIN') {
          this.#enqueue(data.subarray(offset));
          return;
        }
        this.#dropped++;
        return;
      }
    }
  }

  #enqueue(data: Buffer): void {
    if (this.#pendingBytes + data.length > this.#maxPendingBytes) {
      this.#dropped++;
      return;
    }
    this.#pending.push(data);
    this.#pendingBytes += data.length;
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), RETRY_MS);
      this.#timer.unref();
    }
  }
}
