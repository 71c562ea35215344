/**
 * Sample statistics for the benchmarks. Samples are durations in
 * milliseconds; percentiles use the nearest-rank method (no interpolation),
 * so p99 of 300 samples is the 297th smallest, a value that was really seen.
 */
export interface Summary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('cannot summarize an empty sample set');
  const sorted = [...samples].sort((a, b) => a - b);
  let total = 0;
  for (const value of sorted) total += value;
  return {
    n: sorted.length,
    mean: total / sorted.length,
    min: at(sorted, 0),
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: at(sorted, sorted.length - 1),
  };
}

/** Nearest rank on an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return at(sorted, Math.min(sorted.length - 1, Math.max(0, rank - 1)));
}

function at(sorted: readonly number[], index: number): number {
  const value = sorted[index];
  if (value === undefined) throw new Error(`no sample at index ${index}`);
  return value;
}

/** A duration in ms, printed with a unit that keeps 3 significant digits readable. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const abs = Math.abs(ms);
  if (abs >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (abs >= 1) return `${ms.toFixed(abs >= 100 ? 0 : abs >= 10 ? 1 : 2)} ms`;
  const us = ms * 1000;
  if (Math.abs(us) >= 1) return `${us.toFixed(Math.abs(us) >= 100 ? 0 : Math.abs(us) >= 10 ? 1 : 2)} µs`;
  return `${(us * 1000).toFixed(0)} ns`;
}

/** A share of one core's time (0.0135 → "1.35%"), as the idle rows print it. */
export function formatCpuShare(share: number): string {
  return `${(share * 100).toFixed(2)}%`;
}

export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return '—';
  if (ratio >= 10) return `${ratio.toFixed(1)}×`;
  if (ratio >= 0.1) return `${ratio.toFixed(2)}×`;
  return `${ratio.toPrecision(2)}×`;
}

export function formatRate(perSecond: number): string {
  if (perSecond >= 1_000_000) return `${(perSecond / 1_000_000).toFixed(2)} M/s`;
  if (perSecond >= 1_000) return `${(perSecond / 1_000).toFixed(1)} k/s`;
  return `${perSecond.toFixed(0)} /s`;
}
