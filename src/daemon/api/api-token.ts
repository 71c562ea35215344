import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { BerthError, errorMessage, type Logger } from '../../common/index.js';

/** A token file larger than this is not a berth token (refused before reading it all). */
export const API_TOKEN_FILE_MAX_BYTES = 4096;

/**
 * The bearer token that TCP clients must send. Created on first start as 32
 * random bytes (base64url) in a file only the owner can read (0600, set with
 * fchmod so the umask cannot widen it); an existing file is reused, and
 * tightened to 0600 with a warning if anyone else could read or write it.
 * O_NOFOLLOW: a symlink planted at the token's path is refused, not followed.
 */
export function ensureApiToken(path: string, logger?: Logger): string {
  let fd: number;
  let created = false;
  try {
    fd = openSync(
      path,
      constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw tokenError(path, err);
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (openErr) {
      throw tokenError(path, openErr);
    }
  }
  try {
    if (created) {
      fchmodSync(fd, 0o600);
      const token = randomBytes(32).toString('base64url');
      writeSync(fd, `${token}\n`);
      logger?.info({ path }, 'created the API token for TCP clients');
      return token;
    }
    const st = fstatSync(fd);
    if (!st.isFile()) throw tokenError(path, new Error('not a regular file'));
    if (st.size > API_TOKEN_FILE_MAX_BYTES) {
      throw tokenError(path, new Error(`larger than ${API_TOKEN_FILE_MAX_BYTES} bytes`));
    }
    if ((st.mode & 0o077) !== 0) {
      fchmodSync(fd, 0o600);
      logger?.warn(
        { path, mode: (st.mode & 0o777).toString(8) },
        'the API token file was readable by others; tightened it to 0600 (rotate the token if that matters)',
      );
    }
    const buffer = Buffer.alloc(st.size);
    const read = st.size === 0 ? 0 : readSync(fd, buffer, 0, st.size, 0);
    const token = buffer.subarray(0, read).toString('utf8').trim();
    if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token)) {
      throw tokenError(path, new Error('it must hold one token of at least 16 printable characters'));
    }
    return token;
  } finally {
    closeSync(fd);
  }
}

/** Reads a token file on the client side (`--token-file`): the first line, trimmed. */
export function readApiTokenFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (err) {
    throw tokenError(path, err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > API_TOKEN_FILE_MAX_BYTES) {
      throw tokenError(path, new Error(`not a regular file of at most ${API_TOKEN_FILE_MAX_BYTES} bytes`));
    }
    const buffer = Buffer.alloc(st.size);
    const read = st.size === 0 ? 0 : readSync(fd, buffer, 0, st.size, 0);
    const token = buffer.subarray(0, read).toString('utf8').trim();
    if (token === '') throw tokenError(path, new Error('the file is empty'));
    return token;
  } finally {
    closeSync(fd);
  }
}

function tokenError(path: string, err: unknown): BerthError {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'ELOOP' ? 'it is a symlink, which berth does not follow' : (code ?? errorMessage(err));
  return new BerthError('BERTH_CONFIG_INVALID', `API token file ${path}: ${why}`, { cause: err });
}
