/**
 * Ready fast: a spawn of `berth run` until its /readyz answers 200, and a
 * spawn of `berth --version` until it exits, each against a bare `node -e 0`
 * (spawn → exit) in the same run, rounds interleaved. Also the CPU time the
 * berth process spent until ready (/proc/<pid>/stat). Every daemon gets a
 * fresh data directory (state.db created from nothing) and is stopped with
 * SIGTERM after each round; a restart row starts berth on one data directory
 * kept across the rounds (its databases exist, as on a node's every start but
 * the first).
 *
 * BENCH_READY_ROUNDS overrides the rounds (default 15, quick 5).
 *
 * Then one daemon of each build, nothing registered, is left idle: its CPU
 * share over a window after it settled (/proc/<pid>/task/<tid>/schedstat,
 * nanoseconds). The scale benchmark's idle rows measure the plugin node in a
 * runner; this is the whole daemon (its API server, metrics, timers), whose
 * own wakeups the runner does not have.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchSection, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { formatCpuShare, formatMs, summarize } from './lib/stats.js';
import { makeTempDir, nowMs } from './lib/timing.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_READY_ROUNDS ?? (QUICK ? 5 : 15));
/** The bin (package.json): BENCH_READY_MAIN names another entry to compare. */
const MAIN = process.env.BENCH_READY_MAIN ?? fileURLToPath(new URL('../src/cli/main.cjs', import.meta.url));
/**
 * BENCH_READY_COMPARE=<entry>: the same measurements of another entry (e.g. an older build),
 * interleaved; `unbundled` is the bin with BERTH_NO_BUNDLE=1 (every module loaded from dist/src).
 */
const COMPARE = process.env.BENCH_READY_COMPARE;
const COMPARE_ENTRY = COMPARE === 'unbundled' ? MAIN : COMPARE;
const COMPARE_ENV: Record<string, string> = COMPARE === 'unbundled' ? { BERTH_NO_BUNDLE: '1' } : {};
/** The idle daemon: how long it settles after ready, then the window its CPU is measured over. */
const IDLE_SETTLE_MS = QUICK ? 3_000 : 10_000;
const IDLE_WINDOW_MS = QUICK ? 5_000 : 30_000;

function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** spawn → exit of `node <args>`. */
function timeExit(args: string[], env: Record<string, string> = {}): Promise<number> {
  const t0 = nowMs();
  const child = spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(nowMs() - t0) : reject(new Error(`node ${args.join(' ')} exited ${code}`)),
    );
  });
}

function readyz(socketPath: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/readyz' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', () => resolve(0));
  });
}

/** `berth run` on `dataDir` (log level warn): its process, a wait for /readyz 200, and a stop. */
function spawnBerthRun(main: string, env: Record<string, string>, dataDir: string) {
  const child = spawn(process.execPath, [main, 'run', '--data-dir', dataDir, '--log-level', 'warn'], {
    stdio: 'ignore',
    env: { ...process.env, ...env, BERTH_DATA_DIR: dataDir },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const socket = join(dataDir, 'berth.sock');
  return {
    child,
    /** Polls /readyz every `pollMs` until 200; fails if berth exits, or after 30 s from `t0`. */
    async untilReady(t0: number, pollMs: number): Promise<void> {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`berth run exited ${child.exitCode}`);
        if ((await readyz(socket)) === 200) return;
        if (nowMs() - t0 > 30_000) throw new Error('berth run not ready within 30 s');
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
    async stop(): Promise<void> {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** spawn of `berth run` → first /readyz 200, polled every millisecond or so; a fresh data directory unless one is given. */
async function timeReady(
  main = MAIN,
  env: Record<string, string> = {},
  kept?: string,
): Promise<{ readyMs: number; cpuMs: number }> {
  const dir = kept === undefined ? makeTempDir('berth-ready-') : { path: kept, remove: () => {} };
  const t0 = nowMs();
  const run = spawnBerthRun(main, env, dir.path);
  try {
    await run.untilReady(t0, 1);
    const readyMs = nowMs() - t0;
    return { readyMs, cpuMs: cpuMsOf(run.child.pid ?? 0) };
  } finally {
    await run.stop();
    dir.remove();
  }
}

/** Run time so far of `pid`'s main thread and of all its threads, in ms (schedstat: nanoseconds, not 10 ms ticks). */
function threadRunMs(pid: number): { main: number; all: number } {
  let all = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      all += ns / 1e6;
      if (tid === String(pid)) main = ns / 1e6;
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return { main, all };
}

/** One `berth run` on a fresh data directory, nothing registered: its CPU share of one core once settled. */
async function idleShare(
  main = MAIN,
  env: Record<string, string> = {},
): Promise<{ main: number; all: number }> {
  const dir = makeTempDir('berth-idle-');
  const run = spawnBerthRun(main, env, dir.path);
  try {
    await run.untilReady(nowMs(), 10);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    const pid = run.child.pid ?? 0;
    const before = threadRunMs(pid);
    const from = nowMs();
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
    const after = threadRunMs(pid);
    const window = nowMs() - from;
    return { main: (after.main - before.main) / window, all: (after.all - before.all) / window };
  } finally {
    await run.stop();
    dir.remove();
  }
}

export interface ReadyResult {
  node: number[];
  ready: number[];
  readyCpu: number[];
  /** The same on a data directory kept from the previous round. */
  restart: number[];
  version: number[];
  compare: { ready: number[]; readyCpu: number[]; version: number[] };
  /** The idle daemon's CPU share of one core: its main thread, and all its threads. */
  idle: { main: number; all: number };
  compareIdle?: { main: number; all: number };
}

export async function measureReady(rounds = ROUNDS): Promise<ReadyResult> {
  const out: ReadyResult = {
    node: [],
    ready: [],
    readyCpu: [],
    restart: [],
    version: [],
    compare: { ready: [], readyCpu: [], version: [] },
    idle: { main: 0, all: 0 },
  };
  const kept = makeTempDir('berth-ready-kept-');
  // Warm-up: the page cache holds node and dist/ afterwards, as on a node that runs berth.
  await timeExit(['-e', '0']);
  try {
    await measureRounds(out, rounds, kept.path);
  } finally {
    kept.remove();
  }
  out.idle = await idleShare();
  if (COMPARE_ENTRY !== undefined) out.compareIdle = await idleShare(COMPARE_ENTRY, COMPARE_ENV);
  return out;
}

async function measureRounds(out: ReadyResult, rounds: number, kept: string): Promise<void> {
  await timeReady();
  await timeReady(MAIN, {}, kept);
  await timeExit([MAIN, '--version']);
  for (let i = 0; i < rounds; i++) {
    out.node.push(await timeExit(['-e', '0']));
    const { readyMs, cpuMs } = await timeReady();
    out.ready.push(readyMs);
    out.readyCpu.push(cpuMs);
    out.restart.push((await timeReady(MAIN, {}, kept)).readyMs);
    out.version.push(await timeExit([MAIN, '--version']));
    if (COMPARE_ENTRY !== undefined) {
      const other = await timeReady(COMPARE_ENTRY, COMPARE_ENV);
      out.compare.ready.push(other.readyMs);
      out.compare.readyCpu.push(other.cpuMs);
      out.compare.version.push(await timeExit([COMPARE_ENTRY, '--version'], COMPARE_ENV));
    }
  }
}

export async function readyBenchmark(): Promise<BenchSection> {
  const r = await measureReady();
  const base = summarize(r.node);
  const cpu = summarize(r.readyCpu);
  const ready = summarize(r.ready);
  const ratio = ready.p50 / base.p50;
  return {
    title: 'Ready fast: berth run → /readyz 200, berth --version, against node -e 0',
    method:
      `${ROUNDS} interleaved rounds after one warm-up of each: a spawn of \`node -e 0\` until it exits (the ` +
      'floor); a spawn of `berth run` (fresh data directory, log level warn) until GET /readyz on its API ' +
      'socket answers 200 (polled about every millisecond); the same on one data directory kept across the rounds ' +
      '(restart: its databases exist); a spawn of `berth --version` until it exits.',
    tables: [
      {
        caption: 'Spawn → ready / exit; baseline = node -e 0',
        columns: LATENCY_COLUMNS,
        rows: [
          latencyRow('node -e 0', base),
          latencyRow('berth run → /readyz 200', summarize(r.ready), base),
          latencyRow('berth run → /readyz 200, restart', summarize(r.restart), base),
          latencyRow('berth --version', summarize(r.version), base),
          ...(COMPARE === undefined
            ? []
            : [
                latencyRow(`${COMPARE} run → /readyz 200`, summarize(r.compare.ready), base),
                latencyRow(`${COMPARE} --version`, summarize(r.compare.version), base),
              ]),
        ],
      },
      {
        caption: `berth run idle, nothing registered: CPU share of one core over ${IDLE_WINDOW_MS / 1000} s, ${IDLE_SETTLE_MS / 1000} s after ready`,
        columns: ['case', 'main thread', 'all threads'],
        rows: [
          ['berth run', formatCpuShare(r.idle.main), formatCpuShare(r.idle.all)],
          ...(r.compareIdle === undefined
            ? []
            : [[`${COMPARE} run`, formatCpuShare(r.compareIdle.main), formatCpuShare(r.compareIdle.all)]]),
        ],
      },
    ],
    notes: [
      `Goal of issue 20, spawn → /readyz 200 within 2.5× node -e 0 at p50: ${ratio.toFixed(2)}× (${formatMs(ready.p50)} against ${formatMs(base.p50)}): ${ratio <= 2.5 ? 'met' : 'missed'}.`,
      `CPU time of the berth run process until ready (/proc, 10 ms ticks): p50 ${formatMs(cpu.p50)}, max ${formatMs(cpu.max)}` +
        (COMPARE === undefined ? '.' : `; ${COMPARE}: p50 ${formatMs(summarize(r.compare.readyCpu).p50)}.`),
    ],
  };
}
