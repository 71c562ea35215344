import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { BerthErrorCode } from '../../common/index.js';
import type { RequestHandler } from './api-server.js';
import { markAuthenticated } from './connection-limits.js';
import { errorBody } from './http-errors.js';

/** Routes a TCP client may call without a token (orchestrator probes). */
const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz']);

export interface TcpAccessOptions {
  /** The bearer token every other route needs. */
  token: string;
  /** Host names (besides IP literals and localhost) clients may use to reach the listener. */
  allowedHosts: readonly string[];
  /** Serve /metrics without a token (`metrics.anonymous`). */
  metricsAnonymous: boolean;
  /** With mutual TLS, a client certificate the CA verified authenticates like the token. */
  clientCertAuthenticates: boolean;
  /** Told about each refusal (for the metric). */
  onRefused?: (reason: 'unauthorized' | 'host') => void;
}

export interface AccessRefusal {
  status: number;
  code: BerthErrorCode;
  message: string;
}

/**
 * The host part of a Host header, lower-cased, without the port (IPv6 keeps
 * its brackets off). Undefined when the header is missing or malformed.
 */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = header.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1];
  const plain = /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(text);
  return plain ? plain[1]?.replace(/\.$/, '') : undefined;
}

/**
 * Whether a Host may reach the API. DNS rebinding needs a name the attacker
 * controls, so IP literals and `localhost` (resolved by the client itself)
 * are safe; any other name must be configured in `api.allowedHosts`.
 */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (host === undefined || host === '') return false;
  if (isIP(host) !== 0 || host === 'localhost') return true;
  return allowed.some((name) => name.toLowerCase().replace(/\.$/, '') === host);
}

/** Constant-time comparison of a presented bearer token with the real one. */
export function tokenMatches(header: string | string[] | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const presented = Buffer.from(match[1] as string, 'utf8');
  const expected = Buffer.from(token, 'utf8');
  // Compare equal lengths only (timingSafeEqual's rule); the length itself is not secret.
  if (presented.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(presented, expected);
}

/** Why a TCP request is refused, or undefined when it may go on. */
export function checkTcpAccess(req: IncomingMessage, options: TcpAccessOptions): AccessRefusal | undefined {
  const host = hostOfHeader(req.headers.host);
  if (!hostAllowed(host, options.allowedHosts)) {
    options.onRefused?.('host');
    return {
      status: 403,
      code: 'BERTH_FORBIDDEN_HOST',
      message: `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed; use the listen address or add the name to api.allowedHosts`,
    };
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (ANONYMOUS_PATHS.has(path)) return undefined;
  if (path === '/metrics' && options.metricsAnonymous) return undefined;
  if (
    (options.clientCertAuthenticates && (req.socket as Partial<TLSSocket>).authorized === true) ||
    tokenMatches(req.headers.authorization, options.token)
  ) {
    markAuthenticated(req.socket);
    return undefined;
  }
  options.onRefused?.('unauthorized');
  return {
    status: 401,
    code: 'BERTH_UNAUTHORIZED',
    message:
      req.headers.authorization === undefined
        ? 'this route needs Authorization: Bearer <token> (the token is in <data-dir>/api-token; the CLI takes --token-file or $BERTH_TOKEN)'
        : "the bearer token is not valid; use the one in the daemon's api-token file",
  };
}

/** Writes a refusal as berth's JSON error shape and ends the request. */
export function sendRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: AccessRefusal,
  extra?: Record<string, string>,
): void {
  res.writeHead(refusal.status, {
    'content-type': 'application/json; charset=utf-8',
    ...(refusal.status === 401 ? { 'www-authenticate': 'Bearer realm="berth"' } : {}),
    ...extra,
  });
  res.end(JSON.stringify(errorBody(refusal.code, refusal.message)));
  req.resume();
}

/** Wraps the API handler for the TCP listener: nothing reaches a route before the checks pass. */
export function guardTcp(handler: RequestHandler, options: TcpAccessOptions): RequestHandler {
  return (req, res) => {
    const refusal = checkTcpAccess(req, options);
    if (refusal) sendRefusal(req, res, refusal);
    else handler(req, res);
  };
}
