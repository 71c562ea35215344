import { type IncomingMessage, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BerthError, errorMessage } from '../common/index.js';
import { formatHostPort, type TcpAddress } from '../daemon/contract.js';
import { withCliHints } from './cli-hints.js';

/**
 * Where the daemon's API is: its unix socket, or a TCP address (`berth run
 * --listen`) with the bearer token TCP needs and, for HTTPS, the CA that
 * signed the daemon's certificate (and a client certificate for mutual TLS).
 */
export type ApiTarget =
  | { socketPath: string }
  | {
      tcp: TcpAddress;
      token?: string;
      /** Where the token came from, for the error when the daemon refuses it. */
      tokenFrom?: string;
      tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
    };

export function describeTarget(target: ApiTarget): string {
  if ('socketPath' in target) return target.socketPath;
  return `${target.tls ? 'https' : 'http'}://${formatHostPort(target.tcp)}`;
}

/** One server-sent event as received. */
export interface SseMessage {
  event: string;
  data: string;
  /** The event's `id:`, to resume after it (Last-Event-ID). */
  id?: string;
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such socket',
  ECONNREFUSED: 'connection refused',
  EACCES: 'permission denied',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
};

/**
 * A small client for the daemon's HTTP API over node:http. Failures become
 * BerthErrors: BERTH_API_UNREACHABLE when nothing answers, BERTH_API_ERROR
 * (with the daemon's own code and message) when the daemon says no.
 */
export class ApiClient {
  readonly target: ApiTarget;

  constructor(target: ApiTarget) {
    this.target = target;
  }

  #open(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const target = this.target;
    const where =
      'socketPath' in target
        ? { socketPath: target.socketPath }
        : { host: target.tcp.host, port: target.tcp.port, ...(target.tls ?? {}) };
    if ('tcp' in target && target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
    const send = 'tcp' in target && target.tls ? httpsRequest : request;
    return new Promise((resolve, reject) => {
      const req = send({ ...where, method, path, headers }, resolve);
      req.once('error', (err: NodeJS.ErrnoException) => {
        const reason = (err.code && REASONS[err.code]) ?? errorMessage(err);
        reject(
          new BerthError(
            'BERTH_API_UNREACHABLE',
            `cannot reach the daemon at ${describeTarget(this.target)}: ${reason} (is \`berth run\` running?)`,
            { cause: err },
          ),
        );
      });
      req.end(payload);
    });
  }

  /** Sends a request and returns the parsed JSON answer; a non-2xx answer throws BERTH_API_ERROR. */
  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.#open(method, path, body);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const status = res.statusCode ?? 0;
    if (status === 401) throw this.#unauthorized();
    if (status >= 200 && status < 300) {
      if (parsed === undefined && text !== '') {
        throw new BerthError(
          'BERTH_API_ERROR',
          `the daemon answered ${method} ${path} with something that is not JSON`,
        );
      }
      return parsed as T;
    }
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const message =
      typeof error?.message === 'string'
        ? withCliHints(error.message)
        : `HTTP ${status} ${res.statusMessage ?? ''}`.trim();
    throw new BerthError('BERTH_API_ERROR', message, {
      details: { status, code: typeof error?.code === 'string' ? error.code : undefined },
    });
  }

  /** A 401 said in the CLI's terms: no token was sent, or the one sent is wrong (and where it came from). */
  #unauthorized(): BerthError {
    const target = this.target;
    const where = 'tcp' in target ? formatHostPort(target.tcp) : describeTarget(target);
    const message =
      'tcp' in target && target.token !== undefined
        ? `the bearer token is not valid for ${where} (it came from ${target.tokenFrom ?? 'the caller'}); pass the daemon's api-token with --token-file or BERTH_TOKEN`
        : `no token given for ${where}; pass --token-file or set BERTH_TOKEN (the local daemon's token is sent only to the address it recorded in <data-dir>/api-address)`;
    return new BerthError('BERTH_API_ERROR', message, {
      details: { status: 401, code: 'BERTH_UNAUTHORIZED' },
    });
  }

  /**
   * Opens a server-sent event stream (throws if the daemon refuses it) and
   * returns its events, until it ends or the signal aborts; with
   * `lastEventId`, the daemon first replays what came after it.
   */
  async openEvents(
    path: string,
    signal?: AbortSignal,
    lastEventId?: string,
  ): Promise<AsyncGenerator<SseMessage>> {
    const res = await this.#open(
      'GET',
      path,
      undefined,
      lastEventId === undefined
        ? { accept: 'text/event-stream' }
        : { accept: 'text/event-stream', 'last-event-id': lastEventId },
    );
    if (res.statusCode === 401) {
      res.resume();
      throw this.#unauthorized();
    }
    if ((res.statusCode ?? 0) !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      let message = `HTTP ${res.statusCode}`;
      try {
        const error = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.error;
        if (typeof error?.message === 'string') message = error.message;
      } catch {
        // not berth's error shape: keep the status
      }
      throw new BerthError('BERTH_API_ERROR', `the daemon answered GET ${path}: ${message}`, {
        details: { status: res.statusCode },
      });
    }
    return readSse(res, signal);
  }

  /** Follows a server-sent event stream until it ends or the signal aborts. */
  async *events(path: string, signal?: AbortSignal, lastEventId?: string): AsyncGenerator<SseMessage> {
    yield* await this.openEvents(path, signal, lastEventId);
  }
}

async function* readSse(res: IncomingMessage, signal: AbortSignal | undefined): AsyncGenerator<SseMessage> {
  const onAbort = () => res.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  let buffer = '';
  try {
    res.setEncoding('utf8');
    for await (const chunk of res) {
      buffer += chunk as string;
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const message = parseSseBlock(block);
        if (message) yield message;
      }
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    res.destroy();
  }
}

/** Parses one SSE block; comments (heartbeats) and blocks without data give undefined. */
export function parseSseBlock(block: string): SseMessage | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line === '') continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return undefined;
  return id === undefined ? { event, data: data.join('\n') } : { event, data: data.join('\n'), id };
}
