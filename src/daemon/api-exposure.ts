import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Counter, type Registry } from 'prom-client';
import { BerthError, errorMessage, type Logger } from '../common/index.js';
import { listenTcp, listenUnix } from './api/api-listener.js';
import type { RequestHandler } from './api/api-server.js';
import { ensureApiToken } from './api/api-token.js';
import type { ConnectionLimits } from './api/connection-limits.js';
import { guardTcp } from './api/tcp-access.js';
import type { DaemonConfig } from './config/config.js';
import type { TcpAddress } from './config/listen-address.js';

/** What `api.*` limits were hit, by which limit, for the `berth_api_limit_hits_total` metric. */
export type ApiLimit =
  | 'connections'
  | 'unauthenticated-connections'
  | 'event-streams'
  | 'lagged'
  | 'unauthorized'
  | 'host';

export interface ApiLimitMetrics {
  hit(limit: ApiLimit): void;
}

export function createApiLimitMetrics(registry: Registry): ApiLimitMetrics {
  const hits = new Counter({
    name: 'berth_api_limit_hits_total',
    help: 'API requests or connections refused or cut off by a limit: connections (api.maxConnections), unauthenticated-connections (an idle tokenless TCP connection closed for api.maxUnauthenticatedConnections), event-streams (api.maxEventStreams), lagged (an event-stream client cut off), unauthorized (TCP without a valid token), host (Host header not allowed).',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  return { hit: (limit) => hits.inc({ limit }) };
}

export interface ServedApi {
  servers: Server[];
  tcp?: TcpAddress;
}

/**
 * Serves the API request handler where the config says: always the private
 * unix socket (0600, no token), and with `listen` TCP, where every request
 * first passes the Host check and (except /healthz and /readyz) the bearer
 * token or a verified client certificate. Both listeners are bounded by the
 * `api.*` connection limits; on TCP, connections that have not shown
 * credentials yet also have a cap and a short idle timeout of their own. The
 * token file is created on first start.
 */
export async function serveApi(
  handler: RequestHandler,
  config: DaemonConfig,
  logger: Logger,
  metrics: ApiLimitMetrics,
  onServer: (server: Server) => void,
): Promise<ServedApi> {
  const token = ensureApiToken(config.api.tokenFile, logger);
  const limits: ConnectionLimits = {
    maxConnections: config.api.maxConnections,
    headersTimeoutMs: config.api.headersTimeoutMs,
    idleTimeoutMs: config.api.idleTimeoutMs,
    onRefused: () => metrics.hit('connections'),
  };
  const servers: Server[] = [];
  const unix = await listenUnix(handler, config.apiSocketPath, limits);
  servers.push(unix);
  onServer(unix);
  if (!config.listen) return { servers };

  const tls = config.tls === undefined ? undefined : readTls(config.tls);
  const guarded = guardTcp(handler, {
    token,
    allowedHosts: config.api.allowedHosts,
    metricsAnonymous: config.api.metricsAnonymous,
    clientCertAuthenticates: tls?.ca !== undefined,
    onRefused: (reason) => metrics.hit(reason),
  });
  const tcpLimits: ConnectionLimits = {
    ...limits,
    unauthenticated: {
      maxConnections: config.api.maxUnauthenticatedConnections,
      idleTimeoutMs: config.api.unauthenticatedIdleTimeoutMs,
    },
    onEvicted: () => metrics.hit('unauthenticated-connections'),
  };
  const tcp = await listenTcp(guarded, config.listen, { limits: tcpLimits, ...(tls ? { tls } : {}) });
  servers.push(tcp.server);
  onServer(tcp.server);
  return { servers, tcp: tcp.address };
}

function readTls(tls: NonNullable<DaemonConfig['tls']>): { cert: Buffer; key: Buffer; ca?: Buffer } {
  const read = (path: string, key: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `${key}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})`,
        { cause: err },
      );
    }
  };
  const out: { cert: Buffer; key: Buffer; ca?: Buffer } = {
    cert: read(tls.cert, 'tls.cert'),
    key: read(tls.key, 'tls.key'),
  };
  if (tls.clientCA !== undefined) out.ca = read(tls.clientCA, 'tls.clientCA');
  return out;
}
