/**
 * Memory of pod references (issue 17's probe): one pod with 10,000 secret
 * references, then 40 pods with 5,000 each (41 PUTs), then every pod
 * deleted. A real `berth run` child on a temp data directory; RSS read from
 * /proc/<pid>/status before, at the peak (after each PUT) and 10 s after the
 * deletes. Goal: under 250 MB RSS or refused; after the deletes within 20 MB
 * of the start. `--caps=raised` lifts objects.maxReferencesPerPod and
 * objects.maxPods to show what the references cost when admitted.
 * BENCH_RSS_SETTLE_MS (default 10 s) is the wait before the last reading: the
 * Watch strategy keeps a released object's watch until it has been idle for
 * 5 × the pod resync interval (5 min), as the kubelet does, so what the
 * references held is all returned only after that.
 *
 *   npm run build && node dist/bench/pod-references-rss.js [--caps=raised]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const raised = process.argv.includes('--caps=raised');
const MAIN = fileURLToPath(new URL('../src/cli/main.cjs', import.meta.url));

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

function call(socketPath: string, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, method, path, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function pod(uid: string, references: number): string {
  const volumes = Array.from({ length: references }, (_, i) => ({
    name: `v${i}`,
    secret: { secretName: `secret-${i}` },
  }));
  return JSON.stringify({ metadata: { uid }, spec: { containers: [{ name: 'c' }], volumes } });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-rss-'));
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify(
      raised ? { objects: { maxReferencesPerPod: 20_000, maxPods: 1000, maxPodBytes: 8 << 20 } } : {},
    ),
  );
  const child = spawn(
    process.execPath,
    [MAIN, 'run', '--data-dir', dir, '--config', config, '--log-level', 'error'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, HOME: dir },
    },
  );
  const socketPath = join(dir, 'berth.sock');
  try {
    for (let i = 0; i < 200; i++) {
      if ((await call(socketPath, 'GET', '/readyz').catch(() => 0)) === 200) break;
      await sleep(100);
    }
    await sleep(2000);
    const pid = child.pid as number;
    const before = rssMb(pid);
    let peak = before;
    const statuses: number[] = [];
    statuses.push(await call(socketPath, 'PUT', '/v1/pods/ns/big', pod('big', 10_000)));
    peak = Math.max(peak, rssMb(pid));
    for (let i = 0; i < 40; i++) {
      statuses.push(await call(socketPath, 'PUT', `/v1/pods/ns/p${i}`, pod(`p${i}`, 5_000)));
      peak = Math.max(peak, rssMb(pid));
    }
    for (const name of ['big', ...Array.from({ length: 40 }, (_, i) => `p${i}`)]) {
      await call(socketPath, 'DELETE', `/v1/pods/ns/${name}`);
    }
    await sleep(Number(process.env.BENCH_RSS_SETTLE_MS ?? 10_000));
    const after = rssMb(pid);
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    console.log(
      JSON.stringify({ caps: raised ? 'raised' : 'default', puts: counts, rssMb: { before, peak, after } }),
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
