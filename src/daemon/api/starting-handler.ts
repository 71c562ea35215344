import type { RequestHandler } from './api-server.js';
import { errorBody } from './http-errors.js';

/**
 * The API is served from the moment the daemon claims its socket, so that
 * orchestration sees "alive, not ready" (as from any serious node daemon)
 * instead of connection refused while state is restored and plugins are
 * scanned. Until the full API is ready this answers /healthz and /livez
 * with 200 and everything else with 503 BERTH_NOT_READY.
 */
export function startingHandler(): RequestHandler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const alive = path === '/healthz' || path === '/livez';
    const body = alive
      ? { ok: true }
      : errorBody(
          'BERTH_NOT_READY',
          'berth is starting: restoring state and scanning plugins; retry shortly',
        );
    res.writeHead(alive ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
    req.resume();
  };
}

/** One handler for the listeners, switched from the starting handler to the full API when ready. */
export function switchableHandler(initial: RequestHandler): {
  handler: RequestHandler;
  use(next: RequestHandler): void;
} {
  let current = initial;
  return {
    handler: (req, res) => current(req, res),
    use(next) {
      current = next;
    },
  };
}
