import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback that can be cut and healed, to stage a network
 * partition between one client and a server. Cut: every open connection stops
 * forwarding (bytes are dropped, nothing is closed, like a black hole) and new
 * connections are held the same way. Heal: the held connections are destroyed
 * (the client sees a reset and reconnects) and new ones forward again.
 */
export interface PausableProxy extends AsyncDisposable {
  /** The address to give the client, e.g. http://127.0.0.1:40123. */
  readonly endpoint: string;
  readonly cut: boolean;
  partition(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  let cut = false;
  const pairs = new Set<{ client: Socket; upstream: Socket | undefined; held: boolean }>();
  const server: Server = createServer((client) => {
    const pair: { client: Socket; upstream: Socket | undefined; held: boolean } = {
      client,
      upstream: undefined,
      held: cut,
    };
    pairs.add(pair);
    client.on('error', () => {});
    client.on('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (cut) {
      client.on('data', () => {});
      return;
    }
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => {
      if (!pair.held) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.held) client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      server.close(() => resolve());
    });
    return closing;
  };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    get cut() {
      return cut;
    },
    partition() {
      cut = true;
      for (const pair of pairs) pair.held = true;
    },
    heal() {
      cut = false;
      for (const pair of [...pairs]) {
        if (!pair.held) continue;
        pair.client.destroy();
        pair.upstream?.destroy();
        pairs.delete(pair);
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
