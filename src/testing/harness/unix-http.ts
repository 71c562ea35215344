import { request } from 'node:http';

/** A plain answer from the daemon's API. */
export interface UnixHttpAnswer {
  status: number;
  text: string;
}

/** GET `path` from an HTTP server on a unix socket (the daemon's API), with a deadline. */
export function getOverUnixSocket(
  socketPath: string,
  path: string,
  timeoutMs = 10_000,
): Promise<UnixHttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () =>
      req.destroy(new Error(`GET ${path} on ${socketPath}: no answer in ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end();
  });
}

/** The value of one Prometheus sample (`name{labels}`) in a /metrics text, or undefined. */
export function metricValue(metricsText: string, sample: string): number | undefined {
  for (const line of metricsText.split('\n')) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return undefined;
}
