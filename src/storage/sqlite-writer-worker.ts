/**
 * The SQLite writer thread. It owns one connection and applies each batch of
 * registry changes in one transaction with synchronous=FULL, so the fsync of
 * a commit runs here and never on the daemon's event loop. After a failed
 * write (disk full, read-only file) it drops its connection and opens a new
 * one for the next batch, so a database that became writable again is
 * picked up without a restart. The write-ahead log is kept small
 * (`wal_autocheckpoint`, `journal_size_limit`) and truncated by a checkpoint
 * when a connection is opened after a failure, so berth's own log cannot be
 * what fills a small disk, and space freed by others is usable at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { openDatabase } from './open-database.js';
import type { createChangeWriter } from './sqlite-rows.js';
import type { RegistryChange, WriterInit, WriterReply, WriterRequest } from './sqlite-writer-protocol.js';

const init = workerData as WriterInit;
const port = parentPort;
if (port === null) throw new Error('sqlite-writer-worker must run as a worker thread');

interface Connection {
  db: BetterSqlite3.Database;
  write: (changes: Parameters<ReturnType<typeof createChangeWriter>>[0]) => number;
}

/**
 * SQLite and the row code, loaded once the thread has answered its first
 * message (the start's, which the daemon waits for before it is ready) and
 * not at boot, where they were a quarter of the thread's boot; the first
 * write waits for them if they are still loading. (The main thread has loaded
 * the same package by then, so a broken install still fails the start.)
 */
let modules:
  | Promise<{
      openDatabase: typeof openDatabase;
      createChangeWriter: typeof createChangeWriter;
      applyWalBounds: (db: BetterSqlite3.Database) => void;
    }>
  | undefined;
function load() {
  modules ??= Promise.all([
    import('./open-database.js'),
    import('./sqlite-rows.js'),
    import('./sqlite-wal.js'),
  ]).then(([sqlite, rows, wal]) => ({
    openDatabase: sqlite.openDatabase,
    createChangeWriter: rows.createChangeWriter,
    applyWalBounds: wal.applyWalBounds,
  }));
  return modules;
}

let connection: Connection | undefined;
/** The last write failed: the next connection first tries to shrink the log. */
let failed = false;

async function connect(): Promise<Connection> {
  const { openDatabase, createChangeWriter, applyWalBounds } = await load();
  const db = openDatabase(init.path, { timeout: init.busyTimeoutMs, fileMustExist: true });
  try {
    db.pragma('journal_mode = WAL');
    // FULL: a commit that returned survives power loss or kill -9, not only a clean exit.
    db.pragma('synchronous = FULL');
    applyWalBounds(db);
    if (failed) {
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // Best effort: on a still-full disk the write below fails and says so.
      }
    }
    const writeRows = createChangeWriter(db);
    const write = db.transaction((changes: Parameters<typeof writeRows>[0]) => writeRows(changes));
    return { db, write };
  } catch (err) {
    db.close();
    throw err;
  }
}

function drop(): void {
  try {
    connection?.db.close();
  } catch {
    // Closing a broken connection can fail too; it is being replaced anyway.
  }
  connection = undefined;
}

async function handle(request: WriterRequest): Promise<void> {
  if (request.kind === 'close') {
    drop();
    port?.postMessage({ id: request.id, ok: true, rows: 0 } satisfies WriterReply);
    // Answered (the start waits for that): now load for the first write, in the background.
    load().catch(() => undefined);
    return;
  }
  try {
    connection ??= await connect();
    const rows = connection.write(JSON.parse(request.changesJson) as RegistryChange[]);
    failed = false;
    port?.postMessage({ id: request.id, ok: true, rows } satisfies WriterReply);
  } catch (err) {
    failed = true;
    drop();
    const e = err as { message?: unknown; code?: unknown };
    const error: { message: string; code?: string } = { message: String(e?.message ?? err) };
    if (typeof e?.code === 'string') error.code = e.code;
    port?.postMessage({ id: request.id, ok: false, error } satisfies WriterReply);
  }
}

// One request at a time, in the order posted (the first write waits for the modules).
let queue = Promise.resolve();
port.on('message', (request: WriterRequest) => {
  queue = queue.then(() => handle(request));
});
