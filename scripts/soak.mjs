// The crash soak (not in CI): 50 rounds of kill -9 of `berth run` during plugin
// churn, checking the registry and SQLite after every restart. Run with
// `npm run soak` (builds first). Usage: node scripts/soak.mjs [rounds] [seed]
import { runCrashSoak } from '../dist/test/fixtures/crash-soak.js';

const rounds = Number(process.argv[2] ?? 50);
const seed = Number(process.argv[3] ?? Date.now());
console.log(`crash soak: ${rounds} rounds, seed ${seed}`);
const began = Date.now();
try {
  const result = await runCrashSoak({ rounds, seed, log: (line) => console.log(line) });
  const sorted = [...result.convergeMs].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)];
  const max = sorted.at(-1);
  console.log(
    `crash soak passed: ${rounds} rounds in ${((Date.now() - began) / 1000).toFixed(1)} s; converge p50 ${p50} ms, max ${max} ms`,
  );
} catch (err) {
  console.error(`crash soak FAILED (seed ${seed}): ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
