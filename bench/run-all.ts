/**
 * Runs every benchmark in sequence, prints each table, and (on a full run)
 * overwrites bench/results.md with the machine facts, the method and the
 * results. `npm run bench` builds first and runs dist/bench/run-all.js.
 *
 *   node dist/bench/run-all.js            every benchmark, writes bench/results.md
 *   BENCH_MARKDOWN_OUT=f node dist/bench/run-all.js scale   one benchmark, its markdown to f
 *   node dist/bench/run-all.js registry   only the named ones, prints only
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterBenchmark } from './cluster.js';
import { devicesBenchmark } from './devices.js';
import { handlersBenchmark } from './handlers.js';
import { type Benchmark, type BenchSection, markdownTable, textTable } from './lib/report.js';
import { objectsBenchmark } from './objects.js';
import { readyBenchmark } from './ready.js';
import { registrationLatencyBenchmark } from './registration-latency.js';
import { registryBenchmark } from './registry.js';
import { scaleBenchmark } from './scale.js';
import { startupBenchmark } from './startup.js';

const BENCHMARKS: ReadonlyArray<{ id: string; run: Benchmark }> = [
  { id: 'registration-latency', run: registrationLatencyBenchmark },
  { id: 'registry', run: registryBenchmark },
  { id: 'objects', run: objectsBenchmark },
  { id: 'startup', run: startupBenchmark },
  { id: 'handlers', run: handlersBenchmark },
  { id: 'ready', run: readyBenchmark },
  { id: 'scale', run: scaleBenchmark },
  // Starts etcd and 100 writers (about a minute): in a full run only with BERTH_BENCH_CLUSTER=1, or by name.
  { id: 'cluster', run: clusterBenchmark },
  { id: 'devices', run: devicesBenchmark },
];

const GENERAL_METHOD = [
  'Every number comes from one run of this command on a shared, noisy machine, so absolute times move ' +
    'between runs; read the ratios. Each benchmark measures its baseline in the same run and process as ' +
    'what it compares, interleaved with it (never "all of A, then all of B"), after a warm-up.',
  'Percentiles are nearest-rank over the samples (p99 of 1000 samples is the tenth-slowest; with fewer ' +
    'than 100 samples p99 is the maximum); times come ' +
    "from process.hrtime. Ratios divide the same percentile of a case by the baseline's.",
  'Everything runs in one Node process over unix sockets in a temp dir under /tmp (gRPC plugins, the ' +
    'plugin manager and clients share one event loop), SQLite on the local disk; every server, socket ' +
    'and temp dir is removed afterwards. Loops are bounded by iteration counts.',
];

/** The repository root: the nearest directory above this file with berth's package.json. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'berth'
    ) {
      return dir;
    }
    dir = dirname(dir);
  }
  throw new Error('cannot find the berth repository root above bench/');
}

function gitRevision(root: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

function machineFacts(root: string): string[] {
  const cpuList = cpus();
  return [
    `Date: ${new Date().toISOString()}`,
    `Node ${process.version} on ${platform()} ${release()} (${arch()})`,
    `CPUs: ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown'}; memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `Load average at start (1/5/15 min): ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
    `Revision: ${gitRevision(root)}`,
  ];
}

function renderSection(section: BenchSection): string {
  const parts = [`## ${section.title}`, '', section.method, ''];
  for (const table of section.tables)
    parts.push(`_${table.caption}_`, '', markdownTable(table.columns, table.rows), '');
  if (section.notes.length > 0) parts.push(...section.notes.map((note) => `- ${note}`), '');
  return parts.join('\n');
}

function printSection(section: BenchSection, seconds: number): void {
  console.log(`\n=== ${section.title} (${seconds.toFixed(1)} s)`);
  for (const table of section.tables) {
    console.log(`\n${table.caption}\n${textTable(table.columns, table.rows)}`);
  }
  for (const note of section.notes) console.log(`- ${note}`);
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((id) => !BENCHMARKS.some((b) => b.id === id));
  if (unknown.length > 0) {
    console.error(
      `unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.id).join(', ')}`,
    );
    return 2;
  }
  const selected =
    wanted.length === 0
      ? BENCHMARKS.filter((b) => b.id !== 'cluster' || process.env.BERTH_BENCH_CLUSTER === '1')
      : BENCHMARKS.filter((b) => wanted.includes(b.id));
  const root = repoRoot();
  const facts = machineFacts(root);
  console.log(facts.join('\n'));

  const started = Date.now();
  const rendered: string[] = [];
  let failures = 0;
  for (const benchmark of selected) {
    const t0 = Date.now();
    console.error(`running ${benchmark.id} ...`);
    try {
      const section = await benchmark.run();
      const seconds = (Date.now() - t0) / 1000;
      printSection(section, seconds);
      rendered.push(`${renderSection(section)}\n_Took ${seconds.toFixed(1)} s._\n`);
    } catch (err) {
      failures += 1;
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      console.error(`benchmark ${benchmark.id} failed: ${message}`);
      rendered.push(`## ${benchmark.id}\n\nFAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
  const total = (Date.now() - started) / 1000;
  console.log(`\nall benchmarks: ${total.toFixed(1)} s`);

  if (wanted.length === 0) {
    const command =
      process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : `node ${process.argv[1] ?? ''}`;
    const markdown = [
      '# berth benchmarks',
      '',
      `Generated by \`${command}\` (bench/run-all.ts); overwritten on every full run. Total ${total.toFixed(0)} s.`,
      '',
      '## Machine',
      '',
      ...facts.map((fact) => `- ${fact}`),
      '',
      '## Method',
      '',
      ...GENERAL_METHOD.flatMap((paragraph) => [paragraph, '']),
      ...rendered,
    ].join('\n');
    const target = join(root, 'bench', 'results.md');
    writeFileSync(target, markdown);
    console.log(`wrote ${target}`);
  } else if (process.env.BENCH_MARKDOWN_OUT) {
    // A partial run leaves results.md alone; its sections can be written elsewhere to be merged by hand.
    writeFileSync(
      process.env.BENCH_MARKDOWN_OUT,
      [...facts.map((fact) => `- ${fact}`), '', ...rendered].join('\n'),
    );
    console.log(`wrote ${process.env.BENCH_MARKDOWN_OUT}`);
  }
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
