/**
 * Scale: berth against plugins served by a separate process (the plugin
 * farm), with a bare registrar as the floor, each registrar in its own
 * process so CPU, peak RSS and event-loop delay are its own. Issue 8's six
 * measurements; interleaved rounds (bare, berth, bare, berth, ...).
 *
 * BENCH_QUICK=1: one round, fewer latency samples, 10 s steady window.
 * BENCH_STEADY_MS overrides the steady-state window (default 60 s, quick 10 s).
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PluginFarm, startPluginFarm } from '../src/testing/harness/index.js';
import { goToolsMissing } from '../test/fixtures/go-peers.js';
import { startGoPluginFarm, startGoRegistrar } from './lib/go-farm.js';
import { type IpcChild, startIpcChild } from './lib/ipc-child.js';
import { type BenchSection, type BenchTable, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { formatCpuShare, formatMs, summarize } from './lib/stats.js';
import { makeTempDir } from './lib/timing.js';

const QUICK = process.env.BENCH_QUICK === '1';
/** BENCH_SCALE_ONLY=latency, =storms or =startup runs only those tables (for profiling). */
const ONLY = process.env.BENCH_SCALE_ONLY;
const ROUNDS = QUICK ? 1 : 3;
const LATENCY_SAMPLES = QUICK ? 40 : 200;
/** BENCH_LATENCY_DUMP=<file>: every one-plugin sample, in order, a JSON line per table (where the tail comes from). */
const LATENCY_DUMP = process.env.BENCH_LATENCY_DUMP;
const STEADY_MS = Number(process.env.BENCH_STEADY_MS ?? (QUICK ? 10_000 : 60_000));
/** The storm sizes (BENCH_SCALE_SIZES=1000,5000); the last one also gets the steady-state window. */
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '1000,5000').split(',').map(Number);
const STARTUP_N = Number(process.env.BENCH_SCALE_STARTUP ?? 1000);
const LATENCY_REGISTERED = Number(process.env.BENCH_SCALE_REGISTERED ?? 1000);
/** Storage behind berth's registry per storm table: sqlite (the daemon's); none (the pipeline alone) on request. */
const STORAGES = (process.env.BENCH_SCALE_STORAGES ?? 'sqlite').split(',');
/** BENCH_SCALE_WARM=0 skips the warm storm (one per size, after a storm in the same process). */
const WARM = process.env.BENCH_SCALE_WARM !== '0';
/**
 * Who serves the plugins: go (default; grpc-go, one grpc.Server per socket, as
 * the plugins berth meets in the field) or node (the hand-written HTTP/2 farm).
 */
const GO_MISSING = goToolsMissing();
const FARM = process.env.BENCH_SCALE_FARM ?? (GO_MISSING === undefined ? 'go' : 'node');
/** The floor registrar: go (default; a bare grpc-go client) or node (bench/lib/bare-registrar.ts). */
const FLOOR = process.env.BENCH_SCALE_FLOOR ?? (GO_MISSING === undefined ? 'go' : 'node');
/** BENCH_SCALE_GAP_MS=<ms>: each storm server listens that long after it binds (a crowd of young sockets). */
const GAP_MS = Number(process.env.BENCH_SCALE_GAP_MS ?? 0);
/** A storm that has not registered everything by then is reported as unfinished. */
const STORM_TIMEOUT_MS = Number(process.env.BENCH_SCALE_TIMEOUT_MS ?? (QUICK ? 60_000 : 300_000));
const RUNNER = fileURLToPath(new URL('./lib/scale-runner.js', import.meta.url));
type Mode = 'bare' | 'berth';
/**
 * BENCH_SCALE_MODES=berth runs berth alone, for A/B runs of berth's own numbers: no floor in the
 * goals, and no one-plugin latency tables (their ratios need it).
 */
const MODES = (process.env.BENCH_SCALE_MODES ?? 'bare,berth').split(',') as Mode[];

interface EndReport {
  at: number;
  windowMs: number;
  cpuMs: number;
  peakRssBytes: number;
  rssBytes: number;
  /** null from the Go registrar (no event loop). */
  eldP99Ms: number | null;
  eldMaxMs: number | null;
  /** berth's event-loop thread: time on a CPU, and ready but waiting for one (null from the Go registrar). */
  loopRunMs?: number | null;
  loopWaitMs?: number | null;
  count: number;
}

interface Trial {
  dir: { path: string; remove(): void };
  pluginsDir: string;
  farm: PluginFarm;
  runner: IpcChild;
}

async function openTrial(
  mode: Mode,
  prepare?: (farm: PluginFarm, pluginsDir: string) => Promise<void>,
  storage = 'sqlite',
): Promise<Trial> {
  const dir = makeTempDir('berth-scale-');
  const pluginsDir = join(dir.path, 'plugins');
  mkdirSync(pluginsDir, { recursive: true });
  const farm = FARM === 'go' ? await startGoPluginFarm() : await startPluginFarm();
  try {
    await prepare?.(farm, pluginsDir);
    const runner =
      mode === 'bare' && FLOOR === 'go'
        ? await startGoRegistrar(pluginsDir)
        : await startIpcChild(RUNNER, [mode, pluginsDir, dir.path], { BENCH_SCALE_STORAGE: storage });
    return { dir, pluginsDir, farm, runner };
  } catch (err) {
    // A runner that dies starting (a bad BENCH_RUNNER_FLAGS, a crash) must not leave the farm
    // running: its process would keep the benchmark from ever exiting.
    await farm.stop().catch(() => {});
    dir.remove();
    throw err;
  }
}

async function closeTrial(trial: Trial): Promise<void> {
  await trial.runner.call('stop').catch(() => {});
  await trial.runner.stop();
  await trial.farm.stop();
  trial.dir.remove();
}

/** CPU time (user + system) of another process so far, from /proc (Linux; clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const names = (dir: string, prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => join(dir, `${prefix}${String(i).padStart(5, '0')}.sock`));

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const median = (xs: number[]) => (xs.length === 0 ? Number.NaN : summarize(xs).p50);
const range = (xs: number[], f: (x: number) => string) =>
  xs.length === 1 ? f(xs[0] as number) : `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

/** The event-loop thread's run and run-queue wait over the storms (medians), or a dash. */
function loopShare(rs: readonly StormResult[]): string {
  const run = rs.map((r) => r.loopRunMs).filter((x): x is number => typeof x === 'number');
  const wait = rs.map((r) => r.loopWaitMs).filter((x): x is number => typeof x === 'number');
  if (run.length === 0 || wait.length === 0) return '—';
  return `${sec(median(run))} / ${sec(median(wait))}`;
}

interface StormResult {
  /** NaN when not everything registered within STORM_TIMEOUT_MS. */
  timeMs: number;
  registered: number;
  getInfoPerPlugin: number;
  duplicateNotifies: number;
  cpuMs: number;
  /** The plugin farm's CPU over the storm: the other side of every handshake, on the same two cores. */
  farmCpuMs: number;
  peakRssBytes: number;
  eldP99Ms: number | null;
  eldMaxMs: number | null;
  /** The event-loop thread's time on a CPU and waiting for one over the storm (EndReport). */
  loopRunMs: number | null;
  loopWaitMs: number | null;
  /** Right after the storm (the deferred liveness connects and the storm's garbage fall here), then the window after it. */
  steady?: { cpuShare: number; rssBytes: number }[];
}

async function storm(
  mode: Mode,
  n: number,
  staleFraction: number,
  steady: boolean,
  storage: string,
  warm = false,
): Promise<StormResult> {
  const trial = await openTrial(mode, undefined, storage);
  try {
    await trial.runner.call('start');
    if (warm) {
      // A storm of as many others, registered and removed first in the same process: what a
      // running daemon pays, once V8 has compiled the registration path (a fresh process
      // spends about a third of its storm CPU on V8's compiler threads).
      const before = names(trial.pluginsDir, 'w', n);
      await trial.farm.serve(before);
      await trial.runner.call('waitCount', { target: n, timeoutMs: STORM_TIMEOUT_MS });
      await trial.farm.remove(before);
      await trial.runner.call('waitCount', { target: 0, timeoutMs: STORM_TIMEOUT_MS });
    }
    const live = names(trial.pluginsDir, 'p', n);
    const stale = names(trial.pluginsDir, 's', Math.round(n * staleFraction));
    await trial.runner.call('begin');
    const farmCpuAtBegin = processCpuMs(trial.farm.pid);
    // Stale files appear with the storm (bound, never listening), mixed in.
    if (stale.length > 0) await trial.farm.stale(stale);
    const readyAt = await trial.farm.serve(live, GAP_MS > 0 ? { gapMs: GAP_MS } : {});
    let finished = true;
    await trial.runner.call('waitCount', { target: n, timeoutMs: STORM_TIMEOUT_MS }).catch(() => {
      finished = false;
    });
    const end = await trial.runner.call<EndReport>('end');
    const farmCpuMs = processCpuMs(trial.farm.pid) - farmCpuAtBegin;
    const { sockets } = await trial.farm.stats();
    const first = Math.min(...readyAt);
    const last = Math.max(...sockets.map((s) => s.firstNotifyTrueAt));
    const result: StormResult = {
      timeMs: finished ? last - first : Number.NaN,
      registered: end.count,
      getInfoPerPlugin: sockets.reduce((sum, s) => sum + s.getInfo, 0) / n,
      duplicateNotifies: sockets.filter((s) => s.notifyTrue > 1).length,
      cpuMs: end.cpuMs,
      farmCpuMs,
      peakRssBytes: end.peakRssBytes,
      eldP99Ms: end.eldP99Ms,
      eldMaxMs: end.eldMaxMs,
      loopRunMs: end.loopRunMs ?? null,
      loopWaitMs: end.loopWaitMs ?? null,
    };
    if (steady) {
      result.steady = [];
      for (let window = 0; window < 2; window++) {
        await trial.runner.call('begin', { eld: false });
        await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
        const idle = await trial.runner.call<EndReport>('end');
        result.steady.push({ cpuShare: idle.cpuMs / idle.windowMs, rssBytes: idle.rssBytes });
      }
    }
    return result;
  } finally {
    await closeTrial(trial);
  }
}

interface StartupResult {
  startMs: number;
  /** The registrar's CPU from its start until all are listed. */
  cpuMs: number;
  peakRssBytes: number;
  duplicateNotifies: number;
  removeMs: number;
}

async function startupAndRemoval(mode: Mode, n: number): Promise<StartupResult> {
  let present: string[] = [];
  const trial = await openTrial(mode, async (farm, pluginsDir) => {
    present = names(pluginsDir, 'p', n);
    await farm.serve(present);
  });
  try {
    await trial.runner.call('begin', { eld: false });
    const started = await trial.runner.call<{ startedAt: number }>('start');
    const all = await trial.runner.call<{ at: number }>('waitCount', { target: n, timeoutMs: 600_000 });
    const end = await trial.runner.call<EndReport>('end');
    const { sockets } = await trial.farm.stats();
    const removeAt = await trial.farm.clock();
    await trial.farm.remove(present);
    const gone = await trial.runner.call<{ at: number }>('waitCount', { target: 0, timeoutMs: 600_000 });
    return {
      startMs: all.at - started.startedAt,
      cpuMs: end.cpuMs,
      peakRssBytes: end.peakRssBytes,
      duplicateNotifies: sockets.filter((s) => s.notifyTrue > 1).length,
      removeMs: gone.at - removeAt,
    };
  } finally {
    await closeTrial(trial);
  }
}

async function latency(registered: number): Promise<Record<Mode, { gap0: number[]; gap20: number[] }>> {
  const trials = {} as Record<Mode, Trial>;
  const out = { bare: { gap0: [], gap20: [] }, berth: { gap0: [], gap20: [] } } as Record<
    Mode,
    { gap0: number[]; gap20: number[] }
  >;
  try {
    for (const mode of MODES) {
      trials[mode] = await openTrial(mode, undefined, STORAGES[0]);
      await trials[mode].runner.call('start');
      if (registered > 0) {
        await trials[mode].farm.serve(names(trials[mode].pluginsDir, 'r', registered));
        await trials[mode].runner.call('waitCount', { target: registered, timeoutMs: 600_000 });
      }
    }
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      for (const gap of [0, 20] as const) {
        for (const mode of MODES) {
          const trial = trials[mode];
          const path = join(trial.pluginsDir, `n${gap}-${String(i).padStart(5, '0')}.sock`);
          await trial.farm.serve([path], { gapMs: gap });
          const { readyAt, notifiedAt } = await trial.farm.notified(path);
          (gap === 0 ? out[mode].gap0 : out[mode].gap20).push(Math.max(0, notifiedAt - readyAt));
        }
      }
    }
    if (LATENCY_DUMP !== undefined)
      appendFileSync(LATENCY_DUMP, `${JSON.stringify({ registered, samplesMs: out })}\n`);
    return out;
  } finally {
    for (const trial of Object.values(trials)) await closeTrial(trial);
  }
}

/** The kubelet 1.26 plugin manager against the same kind of Go farm (issue 20, a quiet machine): for scale. */
const KUBELET = {
  latencyP50Ms: 544,
  storm1000Ms: 1360,
  storm1000CpuMs: 430,
  storm5000Ms: 5210,
  startup1000Ms: 350,
  remove1000Ms: 276,
} as const;

/** The storm goals: kubelet's time, CPU per registration, stale within 10%, one GetInfo and Notify each, event loop. */
function stormGoals(
  goals: string[][],
  n: number,
  staleFraction: number,
  results: Record<Mode, StormResult[]>,
  stormTimes: Map<string, number>,
): void {
  const berth = results.berth.filter((r) => !Number.isNaN(r.timeMs));
  if (berth.length === 0) {
    goals.push(goalRow(`storm of ${n}${staleFraction > 0 ? ' + stale' : ''}`, 'unfinished', '', false));
    return;
  }
  const time = median(berth.map((r) => r.timeMs));
  const cpuPer = median(berth.map((r) => r.cpuMs)) / n;
  const floorTime = median(results.bare.map((r) => r.timeMs));
  const floorCpuPer = median(results.bare.map((r) => r.cpuMs)) / n;
  const getInfo = median(berth.map((r) => r.getInfoPerPlugin));
  const twice = Math.max(...berth.map((r) => r.duplicateNotifies));
  const eld = median(berth.map((r) => r.eldP99Ms ?? 0));
  const kubelet = n === 1000 ? KUBELET.storm1000Ms : n === 5000 ? KUBELET.storm5000Ms : undefined;
  if (staleFraction === 0) {
    stormTimes.set(String(n), time);
    goals.push(
      goalRow(
        `storm of ${n}: all registered at or under the kubelet's time`,
        sec(time),
        `bare Go ${sec(floorTime)}; kubelet ${kubelet === undefined ? '—' : sec(kubelet)}`,
        kubelet === undefined ? undefined : time <= kubelet,
      ),
      goalRow(
        `storm of ${n}: CPU per registration ≤ 0.65 ms`,
        `${cpuPer.toFixed(2)} ms`,
        `bare Go ${floorCpuPer.toFixed(2)} ms; kubelet 0.43 ms`,
        cpuPer <= 0.65,
      ),
      goalRow(
        `storm of ${n}: exactly one GetInfo and one Notify(true) per plugin`,
        `${getInfo.toFixed(2)} GetInfo, ${twice} told twice`,
        '',
        getInfo === 1 && twice === 0,
      ),
      goalRow(`storm of ${n}: event-loop delay p99 ≤ 20 ms`, formatMs(eld), '', eld <= 20),
    );
  } else {
    const clean = stormTimes.get(String(n));
    if (clean === undefined) return;
    goals.push(
      goalRow(
        `storm of ${n} with ${Math.round(staleFraction * 100)}% stale: within 10% of the clean storm`,
        `${sec(time)} (${((time / clean - 1) * 100).toFixed(0)}%)`,
        `bare Go ${sec(floorTime)}`,
        time <= clean * 1.1,
      ),
    );
  }
}

/** One row of the goals table: goal, measured (with the floor of the same run), met or missed. */
function goalRow(goal: string, measured: string, floor: string, met: boolean | undefined): string[] {
  return [goal, measured, floor, met === undefined ? 'not measured' : met ? 'met' : 'missed'];
}

export async function scaleBenchmark(): Promise<BenchSection> {
  const tables: BenchTable[] = [];
  const notes: string[] = [];
  const goals: string[][] = [];
  const ratio = (x: number) => `${x.toFixed(2)}×`;

  // (1) One new plugin: ready (listening) -> Notify(true), with 0 and 1,000 registered.
  const latencyTables = (ONLY === undefined || ONLY === 'latency') && MODES.includes('bare');
  for (const registered of latencyTables ? [0, LATENCY_REGISTERED] : []) {
    const samples = await latency(registered);
    const base0 = summarize(samples.bare.gap0);
    const base20 = summarize(samples.bare.gap20);
    const berth0 = summarize(samples.berth.gap0);
    const berth20 = summarize(samples.berth.gap20);
    const p50 = Math.max(berth0.p50 / base0.p50, berth20.p50 / base20.p50);
    const p99 = Math.max(berth0.p99 / base0.p99, berth20.p99 / base20.p99);
    goals.push(
      goalRow(
        `one plugin, ${registered} registered: p50 ≤ 3× and p99 ≤ 3× the bare Go client (bind gap included)`,
        `p50 ${formatMs(berth0.p50)} / ${formatMs(berth20.p50)} (gap), p99 ${formatMs(berth0.p99)} / ${formatMs(berth20.p99)}: worst ${ratio(p50)} / ${ratio(p99)}`,
        `p50 ${formatMs(base0.p50)} / ${formatMs(base20.p50)}, p99 ${formatMs(base0.p99)} / ${formatMs(base20.p99)}; kubelet p50 ${KUBELET.latencyP50Ms} ms`,
        p50 <= 3 && p99 <= 3,
      ),
    );
    tables.push({
      caption: `New plugin, listening → Notify(true), ${registered} already registered; baseline = bare registrar`,
      columns: LATENCY_COLUMNS,
      rows: [
        latencyRow('bare registrar', base0),
        latencyRow('berth', summarize(samples.berth.gap0), base0),
        latencyRow('bare registrar, bind → 20 ms → listen', base20),
        latencyRow('berth, bind → 20 ms → listen', summarize(samples.berth.gap20), base20),
      ],
    });
  }

  // (2) + (5) + (6) Storms.
  const steadyRows: string[][] = [];
  const floors = new Map<string, StormResult[]>();
  const stormTimes = new Map<string, number>();
  for (const storage of ONLY === 'startup' || ONLY === 'latency' ? [] : STORAGES) {
    const stormRows: string[][] = [];
    for (const n of SIZES) {
      for (const staleFraction of (process.env.BENCH_SCALE_STALE ?? '0,0.1').split(',').map(Number)) {
        const results: Record<Mode, StormResult[]> = { bare: [], berth: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const mode of MODES) {
            const steady =
              mode === 'berth' && storage === STORAGES.at(-1) && staleFraction === 0 && round === 0;
            if (mode === 'bare' && storage !== STORAGES[0]) {
              results.bare.push(...(floors.get(`${n}/${staleFraction}`) ?? []).slice(round, round + 1));
              continue;
            }
            results[mode].push(await storm(mode, n, staleFraction, steady, storage));
          }
        }
        floors.set(`${n}/${staleFraction}`, results.bare);
        // One warm storm per size (clean, first storage): the daemon's steady-state cost.
        const warm =
          staleFraction === 0 && storage === STORAGES[0] && WARM
            ? await storm('berth', n, 0, false, storage, true)
            : undefined;
        const floor = median(results.bare.map((r) => r.timeMs));
        if (storage === STORAGES[0]) stormGoals(goals, n, staleFraction, results, stormTimes);
        for (const mode of MODES) {
          const rs = results[mode];
          const done = rs.filter((r) => !Number.isNaN(r.timeMs));
          const unfinished = rs.length - done.length;
          stormRows.push([
            `${mode} ${n}${staleFraction > 0 ? ` + ${Math.round(n * staleFraction)} stale` : ''}`,
            (done.length > 0
              ? range(
                  done.map((r) => r.timeMs),
                  sec,
                )
              : '') +
              (unfinished > 0
                ? ` ${unfinished} run(s) > ${sec(STORM_TIMEOUT_MS)} (${Math.min(...rs.map((r) => r.registered))}/${n} registered)`
                : ''),
            mode === 'bare'
              ? '1×'
              : done.length > 0
                ? `${(median(done.map((r) => r.timeMs)) / floor).toFixed(2)}×`
                : '—',
            median(rs.map((r) => r.getInfoPerPlugin)).toFixed(2),
            String(Math.max(...rs.map((r) => r.duplicateNotifies))),
            range(
              rs.map((r) => r.cpuMs),
              sec,
            ),
            range(
              rs.map((r) => r.farmCpuMs),
              sec,
            ),
            range(
              rs.map((r) => r.peakRssBytes),
              mib,
            ),
            rs.some((r) => r.eldP99Ms === null)
              ? '— (no event loop)'
              : `${formatMs(median(rs.map((r) => r.eldP99Ms ?? 0)))} / ${formatMs(Math.max(...rs.map((r) => r.eldMaxMs ?? 0)))}`,
            loopShare(rs),
          ]);
          if (mode === 'berth' && warm !== undefined) {
            stormRows.push([
              `berth ${n}, warm (after a storm of ${n} registered and removed in the same process)`,
              Number.isNaN(warm.timeMs) ? 'unfinished' : sec(warm.timeMs),
              Number.isNaN(warm.timeMs) ? '—' : `${(warm.timeMs / floor).toFixed(2)}×`,
              warm.getInfoPerPlugin.toFixed(2),
              String(warm.duplicateNotifies),
              sec(warm.cpuMs),
              sec(warm.farmCpuMs),
              mib(warm.peakRssBytes),
              `${formatMs(warm.eldP99Ms ?? 0)} / ${formatMs(warm.eldMaxMs ?? 0)}`,
              loopShare([warm]),
            ]);
            goals.push(
              goalRow(
                `storm of ${n}, warm daemon: CPU per registration ≤ 0.65 ms`,
                `${(warm.cpuMs / n).toFixed(2)} ms`,
                'kubelet 0.43 ms',
                warm.cpuMs / n <= 0.65,
              ),
            );
          }
          const steady = rs.find((r) => r.steady)?.steady;
          if (steady) {
            const seconds = STEADY_MS / 1000;
            const rssGoalMb = n <= 1000 ? 80 : 120;
            const last = steady.at(-1);
            if (last)
              goals.push(
                goalRow(
                  `idle with ${n} registered: ≤ 1% CPU, RSS ≤ ${rssGoalMb} MB`,
                  `${formatCpuShare(last.cpuShare)}, ${mib(last.rssBytes)} (second window)`,
                  `kubelet ${n <= 1000 ? '16.9%, 46 MB' : '123%, 95 MB'}`,
                  last.cpuShare <= 0.01 && last.rssBytes <= rssGoalMb * 1e6,
                ),
              );
            steadyRows.push(
              ...steady.map((w, i) => [
                `berth, ${n} registered`,
                i === 0
                  ? `0–${seconds.toFixed(0)} s after the storm`
                  : `${seconds.toFixed(0)}–${(2 * seconds).toFixed(0)} s after`,
                formatCpuShare(w.cpuShare),
                mib(w.rssBytes),
              ]),
            );
          }
        }
      }
    }
    tables.push({
      caption:
        `[berth's registry storage: ${storage}] ` +
        'Storms: N sockets appear at once (+10% stale files, bound and never listening, created with the storm); ' +
        'time from the first socket listening to the last Notify(true); floor = bare registrar (measured once, shown in each table)',
      columns: [
        'case',
        'time to all registered',
        'vs floor',
        'GetInfo / plugin',
        'plugins told twice',
        'CPU',
        'farm CPU',
        'peak RSS',
        'event-loop delay p99 / max',
        'event loop: on a CPU / waiting for one',
      ],
      rows: stormRows,
    });
  }
  if (steadyRows.length > 0) {
    tables.push({
      caption: `Idle after a storm (each size), two windows back to back: CPU share of one core over each window, RSS at its end`,
      columns: ['case', 'window', 'CPU', 'RSS'],
      rows: steadyRows,
    });
  }

  // (3) + (4) Start-up with 1,000 present, then all removed at once.
  const startRows: string[][] = [];
  const startResults: Record<Mode, StartupResult[]> = { bare: [], berth: [] };
  for (let round = 0; round < (ONLY === 'storms' || ONLY === 'latency' ? 0 : ROUNDS); round++) {
    for (const mode of MODES) startResults[mode].push(await startupAndRemoval(mode, STARTUP_N));
  }
  for (const mode of MODES) {
    const rs = startResults[mode];
    if (rs.length === 0) continue;
    startRows.push([
      mode,
      range(
        rs.map((r) => r.startMs),
        sec,
      ),
      range(
        rs.map((r) => r.cpuMs),
        sec,
      ),
      range(
        rs.map((r) => r.peakRssBytes),
        mib,
      ),
      String(Math.max(...rs.map((r) => r.duplicateNotifies))),
      range(
        rs.map((r) => r.removeMs),
        sec,
      ),
    ]);
  }
  if (startResults.berth.length > 0) {
    const berthStart = median(startResults.berth.map((r) => r.startMs));
    const bareStart = median(startResults.bare.map((r) => r.startMs));
    const berthRemove = median(startResults.berth.map((r) => r.removeMs));
    const bareRemove = median(startResults.bare.map((r) => r.removeMs));
    const twice = Math.max(...startResults.berth.map((r) => r.duplicateNotifies));
    goals.push(
      goalRow(
        `start-up with ${STARTUP_N} present → all registered ≤ ${sec(KUBELET.startup1000Ms)} (kubelet), nobody told twice`,
        `${sec(berthStart)}, ${twice} told twice`,
        `bare Go ${sec(bareStart)}`,
        berthStart <= KUBELET.startup1000Ms && twice === 0,
      ),
      goalRow(
        `${STARTUP_N} removed at once → all deregistered ≤ ${sec(KUBELET.remove1000Ms)} (kubelet)`,
        sec(berthRemove),
        `bare Go ${sec(bareRemove)}`,
        berthRemove <= KUBELET.remove1000Ms,
      ),
    );
  }
  if (goals.length > 0) {
    tables.push({
      caption:
        'Against the goals of issue 20 (this run; floor = the bare Go registrar in the same run, kubelet = issue 20 figures)',
      columns: ['goal', 'berth', 'floor / kubelet', ''],
      rows: goals,
    });
  }
  tables.push({
    caption: `Start with ${STARTUP_N} sockets present (berth: createPluginNode over SQLite, as the daemon), until all are listed; then all removed at once, until all are deregistered`,
    columns: [
      'case',
      'start → all listed',
      'CPU',
      'peak RSS',
      'plugins told twice',
      'removed → all deregistered',
    ],
    rows: startRows,
  });

  if (GO_MISSING !== undefined && process.env.BENCH_SCALE_FARM === undefined)
    notes.push(
      `The Go farm and floor could not be built here (${GO_MISSING}): the Node farm and floor ran instead.`,
    );
  notes.push(
    `Rounds per storm/start-up case: ${ROUNDS} (median, with the range); latency samples per case: ${LATENCY_SAMPLES}.`,
    "berth here is createPluginNode over SQLite with default options (liveness on), the daemon's core; " +
      'GetInfo / plugin counts every GetInfo the farm answered, liveness probes included.',
    'The machine was shared with other work while this ran: absolute times are noisy; compare rows of one run.',
  );
  return {
    title: 'Scale: storms, start-up, removal, steady state, latency (plugins in a separate process)',
    method:
      FARM === 'go'
        ? 'A Go plugin farm (test/fixtures/go/plugin-farm: grpc-go from Debian, one grpc.Server per unix socket, ' +
          "the kubelet's pluginregistration API generated by protoc-gen-go from berth's own proto) serves every " +
          'socket in its own process (bind, then listen; it counts GetInfo and Notify). The registrar under test ' +
          'runs in its own process too (CPU, peak RSS, event-loop delay are its own): berth (createPluginNode, ' +
          'as the daemon), or the floor, a bare grpc-go registrar (test/fixtures/go/registrar: inotify, then ' +
          'a fresh connection, GetInfo and Notify(true) per socket, 64 in parallel, nothing else). Cases ' +
          'interleave floor and berth. The kubelet figures are those of issue 20 (kubelet 1.26 against the same ' +
          'kind of Go farm on a quiet machine), for scale.'
        : 'A plugin farm child process serves every socket (a hand-written HTTP/2 gRPC server per socket that ' +
          'binds, then listens, and counts GetInfo and Notify). The registrar under test runs in its own child ' +
          'process (CPU, peak RSS, event-loop delay are its own): berth, or the bare registrar floor. Cases ' +
          'interleave bare and berth.',
    tables,
    notes,
  };
}
