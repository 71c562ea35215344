import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  statSync,
} from 'node:fs';
import { BerthError, errorMessage, type Logger } from '../common/index.js';

/**
 * berth's files hold secrets (objects/, the API token) and the registry
 * (state.db), so they are private to the user berth runs as, whatever the
 * umask: modes are set explicitly after creation, not left to the umask.
 */

/**
 * Creates a private directory (0700; mkdir's mode is masked by the umask only
 * by removing bits, so 0700 holds under umask 000), or tightens an existing
 * one that group or others can write to 0700, with a warning.
 */
export function ensurePrivateDirectory(path: string, flag: string, logger: Logger): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    const st = statSync(path);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    const mode = st.mode & 0o777;
    if ((mode & 0o022) !== 0) {
      chmodSync(path, 0o700);
      logger.warn(
        { path, mode: mode.toString(8) },
        `${flag} was writable by group or others; tightened it to 0700`,
      );
    }
  } catch (err) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `cannot create ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); choose another ${flag}`,
      { cause: err },
    );
  }
}

/**
 * The directory of the API socket when it is not the data directory (the
 * system layout's /run/berth): created private like the data directory, and
 * checked for writing now, so a read-only or foreign /run/berth fails the
 * start with its path rather than as a failed listen later.
 */
export function ensureRuntimeDirectory(path: string, logger: Logger): void {
  try {
    // One level, not recursive: a read-only /run then reports EROFS (a recursive mkdir says ENOENT).
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    ensurePrivateDirectory(path, 'the API socket directory', logger);
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    const code = (cause as NodeJS.ErrnoException).code ?? errorMessage(cause);
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `the API socket directory ${path} is not writable (${code}); make it writable for berth (under systemd: RuntimeDirectory=berth or ReadWritePaths=${path}), or run with --data-dir`,
      { cause: err },
    );
  }
}

/**
 * Creates a file that only its owner can read and write (0600), or tightens
 * an existing one. O_NOFOLLOW: a symlink planted at the path is refused.
 * SQLite gives its -wal and -shm files the database file's mode, so creating
 * state.db this way keeps those private too.
 */
export function ensurePrivateFile(path: string, what: string): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `cannot open ${what} ${path} (${code === 'ELOOP' ? 'it is a symlink' : (code ?? errorMessage(err))})`,
      { cause: err },
    );
  }
  try {
    if ((fstatSync(fd).mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}
