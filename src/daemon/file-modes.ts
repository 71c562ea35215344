import {
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
