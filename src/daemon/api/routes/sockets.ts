import type { FastifyInstance } from 'fastify';
import type { SocketStatus } from '../api-types.js';
import { socketView } from '../views.js';
import type { SocketListResponse } from '../wire-types.js';

/** GET /v1/sockets: every socket the plugin manager knows, with its state and last error. */
export function socketRoutes(app: FastifyInstance, sockets: () => SocketStatus[]): void {
  app.get(
    '/v1/sockets',
    async (): Promise<SocketListResponse> => ({
      sockets: sockets()
        .map(socketView)
        .sort((a, b) => a.socketPath.localeCompare(b.socketPath)),
    }),
  );
}
