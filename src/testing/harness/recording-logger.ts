import type { LogFn, Logger } from '../../common/index.js';

/** One log call kept by a recording logger. */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/**
 * A Logger that keeps every record, for tests that check what was (or was
 * not) logged at which level. Pass an array to collect into it, or read
 * `records` afterwards. Children share the parent's records.
 */
export function createRecordingLogger(records: LogRecord[] = []): Logger & { records: LogRecord[] } {
  const at =
    (level: LogRecord['level']): LogFn =>
    (fieldsOrMessage, message) => {
      if (typeof fieldsOrMessage === 'string') records.push({ level, fields: {}, message: fieldsOrMessage });
      else
        records.push({ level, fields: fieldsOrMessage as Record<string, unknown>, message: message ?? '' });
    };
  const logger: Logger & { records: LogRecord[] } = {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}
