import { type Logger as PinoLogger, pino, stdTimeFunctions } from 'pino';
import type { Logger } from '../common/index.js';
import type { LogFormat, LogLevel } from './config/config-schema.js';
import { LogSink } from './log-sink.js';
import { formatTextLine } from './text-log-format.js';

/** Where log lines go: anything with a synchronous write of one line (a LogSink, a test's recorder). */
export interface LogDestination {
  write(line: string): unknown;
}

export interface DaemonLoggerOptions {
  level: LogLevel;
  /** `json`, `text`, or `auto` (the default): text when stderr is a terminal, else json. */
  format?: LogFormat;
  /** Where lines go; default a LogSink on stderr (stdout is kept for the one start-up line). */
  destination?: LogDestination;
}

/** The daemon's logger: berth's Logger, plus the level SIGHUP can change. */
export interface DaemonLogger extends Logger {
  readonly level: LogLevel;
  setLevel(level: LogLevel): void;
}

const LEVEL_VALUES: Record<LogLevel, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

type Method = 'debug' | 'info' | 'warn' | 'error';

/** The format `auto` stands for here. */
export function effectiveLogFormat(
  format: LogFormat,
  stderrIsTty = process.stderr.isTTY === true,
): 'json' | 'text' {
  if (format === 'auto') return stderrIsTty ? 'text' : 'json';
  return format;
}

/**
 * The daemon's structured logger. JSON lines carry a string level
 * (`"level":"info"`) and an ISO-8601 time; `text` is one readable line per
 * event. Each key appears once in a line: a component's bindings are merged
 * (the innermost wins) instead of appended, as pino's nested children would
 * (`{"component":"cluster",...,"component":"cluster-writer"}`). Writes are
 * synchronous and go through a LogSink, which never throws.
 */
export function createDaemonLogger(options: DaemonLoggerOptions): DaemonLogger {
  const format = effectiveLogFormat(options.format ?? 'auto');
  const sink = options.destination ?? new LogSink(2);
  const destination =
    format === 'json' ? sink : { write: (line: string) => sink.write(`${formatTextLine(line)}\n`) };
  // pino writes every line it is handed; the level is checked here, so changing it
  // reaches every child at once.
  const root = pino(
    {
      level: 'trace',
      base: { pid: process.pid },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  let level = options.level;
  const make = (bindings: Record<string, unknown>): Logger => {
    const bound: PinoLogger = Object.keys(bindings).length === 0 ? root : root.child(bindings);
    const method =
      (name: Method) =>
      (fieldsOrMessage: object | string, message?: string): void => {
        if (LEVEL_VALUES[name] < LEVEL_VALUES[level]) return;
        if (
          typeof fieldsOrMessage === 'object' &&
          fieldsOrMessage !== null &&
          overlaps(bindings, fieldsOrMessage)
        ) {
          // A field that repeats a binding replaces it rather than appearing twice.
          write(root, name, { ...bindings, ...fieldsOrMessage }, message);
          return;
        }
        write(bound, name, fieldsOrMessage, message);
      };
    return {
      debug: method('debug'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  const logger = make({});
  return {
    ...logger,
    get level() {
      return level;
    },
    setLevel(next: LogLevel) {
      level = next;
    },
  };
}

function write(target: PinoLogger, name: Method, fieldsOrMessage: object | string, message?: string): void {
  // pino reads a second argument as a format argument even when it is undefined.
  if (message === undefined) target[name](fieldsOrMessage as object);
  else target[name](fieldsOrMessage as object, message);
}

function overlaps(bindings: Record<string, unknown>, fields: object): boolean {
  for (const key of Object.keys(bindings)) if (Object.hasOwn(fields, key)) return true;
  return false;
}
