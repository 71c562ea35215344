import { connect, type Socket } from 'node:net';

/** The HTTP/2 client connection preface (RFC 9113 §3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const ACK = 0x1;
/** The largest frame a peer may send before SETTINGS_MAX_FRAME_SIZE is raised (RFC 9113 §4.2). */
const MAX_FRAME = 16_384;

function frame(type: number, flags: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  // stream 0: connection-level frames only
  return Buffer.concat([header, payload]);
}

/**
 * Every keepalive PING carries the same payload: a connection has at most one
 * ping outstanding, so the ACK needs no per-ping key, and the frame is built
 * once for all connections (a ping then allocates nothing).
 */
const PING_PAYLOAD = Buffer.from('berth-lv', 'latin1');
const PING_FRAME = frame(PING, 0, PING_PAYLOAD);
const SETTINGS_ACK_FRAME = frame(SETTINGS, ACK);
/** What a client sends first: the preface and an empty SETTINGS frame. */
const HELLO = Buffer.concat([PREFACE, frame(SETTINGS, 0)]);

/**
 * One idle HTTP/2 connection to a plugin's gRPC server, held for liveness.
 * It speaks just enough HTTP/2 to stay a valid, idle peer (the preface,
 * SETTINGS and their ACKs, PING and PING ACK) and opens no streams, so it
 * costs a socket and a few hundred bytes per plugin instead of a full HTTP/2
 * session. `onClose` runs once when the peer closes, resets or sends GOAWAY.
 * Frames larger than the default maximum frame size close the connection.
 */
export class KeepaliveConnection {
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;
  /** A PING was sent and its ACK has not come back yet. */
  #awaiting = false;
  /** ping() callers waiting for the outstanding PING's ACK. */
  readonly #waiters = new Set<(error: string | undefined) => void>();
  readonly #onClose: () => void;

  constructor(socketPath: string, onClose: () => void) {
    this.#onClose = onClose;
    this.#socket = connect({ path: socketPath });
    this.#socket.unref(); // an idle liveness connection must not keep the process alive
    this.#socket.write(HELLO);
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', () => {}); // 'close' follows
    this.#socket.on('close', () => this.#close(false));
  }

  /**
   * Sends one PING (or leaves the outstanding one be); `answered` turns true
   * when its ACK arrives. The liveness prober sends a period's pings with this
   * and judges them all with one timer.
   */
  sendPing(): void {
    if (this.#closed || this.#awaiting) return;
    this.#awaiting = true;
    this.#socket.write(PING_FRAME);
  }

  /** No PING is outstanding: the last one sent was answered (or none was sent). */
  get answered(): boolean {
    return !this.#awaiting && !this.#closed;
  }

  /** One PING answered within `timeoutMs`: undefined, or why not. */
  ping(timeoutMs: number): Promise<string | undefined> {
    if (this.#closed) return Promise.resolve('the connection is closed');
    this.sendPing();
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => finish(`no answer to a keepalive ping within ${timeoutMs} ms`),
        timeoutMs,
      );
      const finish = (error: string | undefined) => {
        clearTimeout(timer);
        this.#waiters.delete(finish);
        resolve(error);
      };
      this.#waiters.add(finish);
    });
  }

  destroy(): void {
    this.#close(true);
  }

  #close(byUs: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    for (const finish of [...this.#waiters]) finish('the connection closed');
    if (!byUs) this.#onClose();
  }

  #answer(): void {
    this.#awaiting = false;
    for (const finish of [...this.#waiters]) finish(undefined);
  }

  #read(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 9 && !this.#closed) {
      const length = this.#buffer.readUIntBE(0, 3);
      if (length > MAX_FRAME) {
        this.#close(false);
        return;
      }
      if (this.#buffer.length < 9 + length) return;
      const type = this.#buffer[3];
      const flags = this.#buffer[4] ?? 0;
      const payload = this.#buffer.subarray(9, 9 + length);
      this.#buffer = this.#buffer.subarray(9 + length);
      if (type === SETTINGS && (flags & ACK) === 0) this.#socket.write(SETTINGS_ACK_FRAME);
      else if (type === PING && (flags & ACK) === 0)
        this.#socket.write(frame(PING, ACK, Buffer.from(payload)));
      else if (type === PING && payload.equals(PING_PAYLOAD)) this.#answer();
      else if (type === GOAWAY) this.#close(false);
    }
    if (this.#buffer.length === 0) this.#buffer = Buffer.alloc(0);
  }
}
