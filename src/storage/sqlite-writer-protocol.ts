import type { RegistryChange } from './types.js';

export type { RegistryChange };

/** Messages between the SQLite storage and its writer thread. */
export interface WriterInit {
  path: string;
  busyTimeoutMs: number;
}

/**
 * A batch travels as one JSON string: cloning one string is a copy, where
 * cloning thousands of small objects costs the sending event loop far more.
 */
export type WriterRequest =
  | { kind: 'apply'; id: number; changesJson: string }
  | { kind: 'close'; id: number };

export type WriterReply =
  | { id: number; ok: true; rows: number }
  | { id: number; ok: false; error: { message: string; code?: string } };
