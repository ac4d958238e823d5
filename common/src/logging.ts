import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a logged object: secrets must never reach a log
 * line, even when a caller logs a whole request or config object by mistake.
 */
const REDACT_PATHS = [
  'password',
  '*.password',
  '*.*.password',
  'token',
  '*.token',
  'signingKey',
  '*.signingKey',
  '*.*.signingKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
];

export interface LoggerOptions {
  level?: string;
  /** Where lines go; tests pass a stream to read them back. Defaults to stdout. */
  destination?: NodeJS.WritableStream;
}

/** The process logger: structured JSON lines. Every line carries `role` and `component`. */
export function createLogger(role: string, options: LoggerOptions = {}): Logger {
  const opts = {
    level: options.level ?? process.env.STRATA_LOG_LEVEL ?? 'info',
    base: { role },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const root = options.destination ? pino(opts, options.destination as pino.DestinationStream) : pino(opts);
  const main = root.child({ component: 'main' });
  ROOTS.set(main, root);
  return main;
}

/** Component loggers derive from the role's root logger, so `component` appears once per line. */
const ROOTS = new WeakMap<Logger, Logger>();

/** A child logger for one component of a role (`component` is on every line it writes). */
export function componentLogger(parent: Logger, component: string): Logger {
  const root = ROOTS.get(parent) ?? parent;
  const child = root.child({ component });
  ROOTS.set(child, root);
  return child;
}

/** Logs an error's name and message, never its stack into responses; stacks stay in logs only. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { err: { name: err.name, message: err.message, stack: err.stack } };
  return { err: String(err) };
}
