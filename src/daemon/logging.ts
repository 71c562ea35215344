import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config/config-schema.js';

export interface DaemonLoggerOptions {
  level: LogLevel;
  /** Human-readable output; default: when stderr is a terminal. */
  pretty?: boolean;
  /** Where logs go; default: stderr. */
  destination?: DestinationStream;
}

/**
 * The daemon's structured logger: JSON lines on stderr (stdout is kept for the
 * one start-up line), pretty-printed when a person is watching the terminal.
 * Synchronous writes, so the last lines before an exit are never lost.
 */
export function createDaemonLogger(options: DaemonLoggerOptions): PinoLogger {
  const base = { level: options.level, base: { pid: process.pid } };
  if (options.destination) return pino(base, options.destination);
  const usePretty = options.pretty ?? process.stderr.isTTY === true;
  if (usePretty) {
    return pino(
      base,
      pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l' }),
    );
  }
  return pino(base, pino.destination({ dest: 2, sync: true }));
}
