import type { RegistryChange } from './types.js';

/** Messages between the SQLite storage and its writer thread. */
export interface WriterInit {
  path: string;
  busyTimeoutMs: number;
}

export type WriterRequest =
  | { kind: 'apply'; id: number; changes: readonly RegistryChange[] }
  | { kind: 'close'; id: number };

export type WriterReply =
  | { id: number; ok: true; rows: number }
  | { id: number; ok: false; error: { message: string; code?: string } };
