/**
 * The logging surface components depend on. It is the subset of pino's API
 * berth uses, so a pino logger satisfies it directly; tests pass silentLogger
 * or a recording logger from src/testing.
 */
export type LogFn = (fieldsOrMessage: object | string, message?: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

const noop: LogFn = () => {};

export const silentLogger: Logger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
};
