import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { createTempDir, type TempDir } from '../temp-dir.js';

/**
 * Starts a real etcd (Debian's etcd-server package, /usr/bin/etcd) as a child
 * process for tests and local experiments: loopback ports, its own data dir,
 * and a wait until it answers /health. One member, no auth, no TLS.
 */
export interface EtcdServerOptions {
  /** Data directory to use (kept on stop). Default: a fresh temp dir, removed on stop. */
  dataDir?: string;
  /** etcd's --experimental-watch-progress-notify-interval, for tests of watch bookmarks. Default: etcd's (10 min). */
  watchProgressNotifyIntervalMs?: number;
  /** Serve clients over TLS with these PEM files, requiring client certificates signed by `ca`. */
  tls?: { cert: string; key: string; ca: string };
  /** How long to wait for the first healthy answer. Default 30 s. */
  startTimeoutMs?: number;
  /** The etcd binary. Default /usr/bin/etcd. */
  binary?: string;
}

export interface EtcdServer extends AsyncDisposable {
  /** Client URL, e.g. http://127.0.0.1:40123. */
  readonly endpoint: string;
  readonly dataDir: string;
  /** Stops etcd and starts it again on the same ports and data (for reconnect tests). */
  restart(): Promise<void>;
  /** Kills etcd, waits for it to exit and removes the temp data dir. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_BINARY = '/usr/bin/etcd';
const PORT_ATTEMPTS = 5;

export async function startEtcdServer(options: EtcdServerOptions = {}): Promise<EtcdServer> {
  const binary = options.binary ?? DEFAULT_BINARY;
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new Error(`etcd not installed: apt-get install etcd-server (no executable at ${binary})`);
  }
  const tempDir: TempDir | undefined =
    options.dataDir === undefined ? createTempDir('berth-etcd-') : undefined;
  const dataDir = options.dataDir ?? (tempDir as TempDir).join('data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const settings: LaunchSettings = {
    binary,
    dataDir,
    watchProgressNotifyIntervalMs: options.watchProgressNotifyIntervalMs,
    tls: options.tls,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
  };

  let lastError: unknown;
  // Free ports are found by binding port 0 and releasing it; another process may grab one
  // in between, so a start that fails on "address already in use" is retried with new ports.
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const [clientPort = 0, peerPort = 0] = await freePorts(2);
    try {
      const first = await launch(settings, singleMember(clientPort, peerPort));
      return serverHandle(settings, tempDir, clientPort, peerPort, first);
    } catch (err) {
      lastError = err;
      if (!(err instanceof PortConflictError)) break;
    }
  }
  tempDir?.remove();
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

/** @internal */
export interface LaunchSettings {
  binary: string;
  dataDir: string;
  watchProgressNotifyIntervalMs: number | undefined;
  tls?: { cert: string; key: string; ca: string } | undefined;
  startTimeoutMs: number;
}

/** One etcd process; `kill` is idempotent (SIGTERM by default, SIGKILL for a crash). */
export interface RunningEtcd {
  kill(signal?: NodeJS.Signals): Promise<void>;
  readonly pid: number | undefined;
}

/** @internal */
export class PortConflictError extends Error {}

function serverHandle(
  settings: LaunchSettings,
  tempDir: TempDir | undefined,
  clientPort: number,
  peerPort: number,
  first: RunningEtcd,
): EtcdServer {
  let current = first;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await current.kill();
      tempDir?.remove();
    })();
    return stopping;
  };
  const restart = async () => {
    if (stopping !== undefined) throw new Error('etcd server was stopped');
    await current.kill();
    current = await launch(settings, singleMember(clientPort, peerPort));
  };
  return {
    endpoint: `${settings.tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`,
    dataDir: settings.dataDir,
    restart,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** One member's identity: its name, ports, and the whole cluster's peer list. */
export interface MemberSpec {
  name: string;
  clientPort: number;
  peerPort: number;
  /** etcd's --initial-cluster value (name=peerUrl,...). */
  initialCluster: string;
}

function singleMember(clientPort: number, peerPort: number): MemberSpec {
  const name = 'berth-test';
  return { name, clientPort, peerPort, initialCluster: `${name}=http://127.0.0.1:${peerPort}` };
}

/** @internal Starts one etcd process (also used by the three-member test cluster). */
export async function launch(settings: LaunchSettings, member: MemberSpec): Promise<RunningEtcd> {
  const clientUrl = `${settings.tls ? 'https' : 'http'}://127.0.0.1:${member.clientPort}`;
  const peerUrl = `http://127.0.0.1:${member.peerPort}`;
  const name = member.name;
  const args = [
    `--name=${name}`,
    `--data-dir=${settings.dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=${member.initialCluster}`,
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-level=warn',
  ];
  if (settings.tls) {
    args.push(
      `--cert-file=${settings.tls.cert}`,
      `--key-file=${settings.tls.key}`,
      `--trusted-ca-file=${settings.tls.ca}`,
      '--client-cert-auth',
    );
  }
  if (settings.watchProgressNotifyIntervalMs !== undefined) {
    args.push(`--experimental-watch-progress-notify-interval=${settings.watchProgressNotifyIntervalMs}ms`);
  }
  const child = spawn(settings.binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: etcdEnv() });
  const output = new OutputTail();
  child.stdout?.on('data', (chunk: Buffer) => output.add(chunk));
  child.stderr?.on('data', (chunk: Buffer) => output.add(chunk));
  // If the test process dies without stopping us, do not leave etcd running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let killing: Promise<void> | undefined;
  const killIt = (signal: NodeJS.Signals = 'SIGTERM') => {
    killing ??= (async () => {
      await kill(child, exited, signal);
      process.removeListener('exit', killOnExit);
    })();
    return killing;
  };
  try {
    await waitHealthy(clientUrl, child, exited, settings.startTimeoutMs, settings.tls);
  } catch (err) {
    await killIt();
    const text = output.text();
    if (/address already in use/i.test(text)) throw new PortConflictError(text);
    throw new Error(`etcd did not start: ${(err as Error).message}\n--- etcd output ---\n${text}`);
  }
  return { kill: killIt, pid: child.pid };
}

/** etcd 3.4 refuses to run on architectures other than amd64/ppc64le unless told to. */
function etcdEnv(): NodeJS.ProcessEnv {
  const goArch: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    ia32: '386',
    s390x: 's390x',
  };
  const arch = goArch[process.arch] ?? process.arch;
  const env = { ...process.env };
  if (arch !== 'amd64' && arch !== 'ppc64le') env.ETCD_UNSUPPORTED_ARCH = arch;
  return env;
}

/** @internal */
export async function waitHealthy(
  clientUrl: string,
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
  tls?: { cert: string; key: string; ca: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  while (true) {
    if (hasExited) {
      throw new Error(`etcd exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      const res = tls
        ? await httpsHealth(clientUrl, tls)
        : await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as { health?: unknown };
      if (res.ok && (body.health === 'true' || body.health === true)) return;
      lastProblem = `/health answered ${res.status} ${JSON.stringify(body)}`;
    } catch (err) {
      lastProblem = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`not healthy after ${timeoutMs} ms (${lastProblem})`);
    // Poll until healthy or exited; a short real-time pause between probes (startup, not a test wait).
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 25)), exited]);
  }
}

/** /health over mutual TLS (fetch cannot present a client certificate). */
function httpsHealth(
  clientUrl: string,
  tls: { cert: string; key: string; ca: string },
): Promise<{ ok: boolean; status: number; json(): Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${clientUrl}/health`,
      { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key), timeout: 2_000 },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve({
            ok: status >= 200 && status < 300,
            status,
            json: async () => JSON.parse(text) as unknown,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function kill(child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Free loopback TCP ports, found by binding port 0 (all held at once so they differ). */
/** @internal */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('unexpected listen address');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Keeps the last lines etcd printed, for a useful error when it fails to start. */
class OutputTail {
  #lines: string[] = [];
  add(chunk: Buffer): void {
    this.#lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (this.#lines.length > 40) this.#lines = this.#lines.slice(-40);
  }
  text(): string {
    return this.#lines.join('\n');
  }
}
