import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../wait-for.js';

/**
 * Spawns a berth module as a real child process. Works both from compiled
 * tests (dist/*.js) and from TypeScript run through tsx (*.ts): a .ts module
 * is started with `--import tsx`.
 */
export function spawnModule(moduleUrl: URL, args: string[] = [], options: SpawnOptions = {}): ChildProcess {
  const path = fileURLToPath(moduleUrl);
  const nodeArgs = /\.c?ts$/.test(path) ? ['--import', 'tsx', path, ...args] : [path, ...args];
  return spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

/** berth's command line (src/cli/main.cts, the package's bin): main.cjs compiled, main.cts under tsx. */
export const BERTH_CLI: URL = new URL(
  `../../cli/main.c${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`,
  import.meta.url,
);

/** Resolves the sibling module with the same extension as the caller (.ts under tsx, .js when compiled). */
export function siblingModule(callerUrl: string, relativeWithoutExtension: string): URL {
  const ext = callerUrl.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`${relativeWithoutExtension}${ext}`, callerUrl);
}

/** Kills a child (SIGKILL after a grace period) and waits for it to exit. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** What a module run to completion printed, and how it exited. */
export interface ModuleRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a berth module (the CLI, say) as a child process to completion and collects its output. */
export async function runModule(
  moduleUrl: URL,
  args: string[] = [],
  options: SpawnOptions = {},
): Promise<ModuleRun> {
  const child = spawnModule(moduleUrl, args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** A child process with its output kept as lines, for waiting on. */
export interface TrackedChild {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

/** Keeps `child`'s output as lines and adds it to `children` (which the test stops at the end). */
export function trackChild(child: ChildProcess, children: Set<ChildProcess>): TrackedChild {
  children.add(child);
  const proc: TrackedChild = {
    child,
    stdout: [],
    stderr: [],
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => proc.stdout.push(line));
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => proc.stderr.push(line));
  return proc;
}

/** Waits (60 s at most) for a stdout line that matches; fails at once, with its last stderr, if the process exits. */
export function waitForLine(
  proc: TrackedChild,
  what: string,
  match: (line: string) => boolean,
): Promise<string> {
  return waitFor(
    what,
    () => {
      if (proc.child.exitCode !== null) {
        throw new Error(`process exited (${proc.child.exitCode}): ${proc.stderr.slice(-5).join(' | ')}`);
      }
      return proc.stdout.find(match);
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
}
