import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { BerthError } from '../../common/index.js';
import type { ApiTarget } from '../api-client.js';
import { DASHBOARD_PAGE, DASHBOARD_SCRIPT, DASHBOARD_STYLE } from './dashboard-page.js';

/** The cookie the page gets on its first load, so the URL token is needed only once. */
export const DASHBOARD_COOKIE = 'berth_dashboard';
/** Longest request target the page server accepts; the page's own requests are far shorter. */
export const DASHBOARD_MAX_URL_BYTES = 2048;
/** Request headers passed on to the daemon; everything else (cookies, the page token) stays here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'last-event-id'] as const;
/** Answer headers passed back to the browser. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'cache-control', 'retry-after'] as const;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
/** Only the page's own inline script and style run; it talks only to this server. */
const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(DASHBOARD_SCRIPT)}`,
  `style-src ${sha256(DASHBOARD_STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface DashboardOptions {
  /** The daemon's API, resolved as the other client commands resolve it. */
  target: ApiTarget;
  /** 0 (the default) picks a free port. */
  port?: number;
}

export interface DashboardServer {
  /** The URL to open, with the one-time token. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

function cookieToken(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === DASHBOARD_COOKIE) return value.join('=');
  }
  return undefined;
}

function sameToken(given: string | undefined | null, token: Buffer): boolean {
  if (given === undefined || given === null) return false;
  const bytes = Buffer.from(given, 'utf8');
  return bytes.length === token.length && timingSafeEqual(bytes, token);
}

/** Forwards one GET to the daemon and streams the answer back (server-sent events included). */
function proxy(target: ApiTarget, path: string, req: IncomingMessage, res: ServerResponse): void {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  // The daemon's own bearer token (a TCP target); the page token is never sent on.
  if ('tcp' in target && target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
  const where =
    'socketPath' in target
      ? { socketPath: target.socketPath }
      : { host: target.tcp.host, port: target.tcp.port, ...(target.tls ?? {}) };
  const send = 'tcp' in target && target.tls ? httpsRequest : request;
  const upstream = send({ ...where, method: 'GET', path, headers }, (answer) => {
    const out: Record<string, string> = {};
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const value = answer.headers[name];
      if (typeof value === 'string') out[name] = value;
    }
    res.writeHead(answer.statusCode ?? 502, out);
    // Server-sent events must reach the browser as they come.
    res.flushHeaders();
    answer.pipe(res);
    answer.once('error', () => res.destroy());
  });
  upstream.once('error', (err: NodeJS.ErrnoException) => {
    if (res.headersSent) res.destroy();
    else sendError(res, 502, 'BERTH_API_UNREACHABLE', `cannot reach the daemon: ${err.code ?? err.message}`);
  });
  // The browser went away (closed the tab, EventSource reconnecting): end the daemon stream too.
  res.once('close', () => upstream.destroy());
  upstream.end();
}

/**
 * The page server behind `berth dashboard`, in the manner of `kubectl proxy`:
 * loopback only, one random token per run (in the printed URL, then a
 * same-site cookie), GET only, serving one static page and forwarding
 * `/v1/...` to the daemon.
 */
export async function startDashboard(options: DashboardOptions): Promise<DashboardServer> {
  const tokenText = randomBytes(24).toString('base64url');
  const token = Buffer.from(tokenText, 'utf8');
  let port = 0;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const raw = req.url ?? '/';
    if (Buffer.byteLength(raw) > DASHBOARD_MAX_URL_BYTES) {
      sendError(res, 414, 'BERTH_BAD_REQUEST', `request target longer than ${DASHBOARD_MAX_URL_BYTES} bytes`);
      return;
    }
    // A name other than the loopback address is a DNS-rebinding page trying to reach us.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      sendError(res, 403, 'BERTH_FORBIDDEN_HOST', `unexpected Host ${JSON.stringify(host)}`);
      return;
    }
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      sendError(res, 405, 'BERTH_BAD_REQUEST', 'the dashboard is read-only: only GET is served');
      return;
    }
    const url = new URL(raw, 'http://127.0.0.1');
    const fromQuery = url.searchParams.get('token');
    if (!sameToken(fromQuery, token) && !sameToken(cookieToken(req.headers.cookie), token)) {
      sendError(
        res,
        401,
        'BERTH_UNAUTHORIZED',
        'missing or wrong dashboard token: open the URL `berth dashboard` printed',
      );
      return;
    }
    url.searchParams.delete('token');
    if (url.pathname === '/' || url.pathname === '/index.html') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': Buffer.byteLength(DASHBOARD_PAGE),
        'content-security-policy': PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'set-cookie': `${DASHBOARD_COOKIE}=${tokenText}; Path=/; HttpOnly; SameSite=Strict`,
      });
      res.end(DASHBOARD_PAGE);
      return;
    }
    if (url.pathname.startsWith('/v1/')) {
      proxy(options.target, `${url.pathname}${url.search}`, req, res);
      return;
    }
    sendError(res, 404, 'BERTH_NOT_FOUND', `no page ${url.pathname}; the dashboard serves / and GET /v1/...`);
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is in use; pick another with --port, or leave it out for a free one'
          : `cannot be opened (${err.code ?? err.message})`;
      reject(new BerthError('BERTH_LISTEN_FAILED', `dashboard port 127.0.0.1:${options.port ?? 0} ${why}`));
    });
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${tokenText}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
