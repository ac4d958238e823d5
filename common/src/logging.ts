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

/**
 * The fields to log for an error: name, message, the code location it was thrown at and the
 * messages of its causes. Never the stack trace itself (issue 3: no log line carries one), and
 * never the error's own enumerable properties, which may hold request data.
 */
export function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { err: { message: String(err) } };
  const at = err.stack
    ?.split('\n')
    .find((line) => line.trimStart().startsWith('at '))
    ?.trim()
    .slice(3);
  const causes: string[] = [];
  for (let c: unknown = err.cause, i = 0; c !== undefined && i < 5; c = (c as { cause?: unknown })?.cause, i++) {
    causes.push(c instanceof Error ? `${c.name}: ${c.message}` : String(c));
  }
  return { err: { name: err.name, message: err.message, at, ...(causes.length ? { causes } : {}) } };
}
