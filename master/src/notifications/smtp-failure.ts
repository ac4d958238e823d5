/**
 * How a failed send is handled. SMTP reply codes decide: 4xx is temporary (greylisting, a full
 * queue, "try again later"), 5xx is permanent (unknown mailbox, rejected content). A failure
 * without a reply code (refused connection, timeout, DNS) is a transport problem: temporary.
 */
export type FailureKind = 'temporary' | 'permanent';

export interface SendFailure {
  kind: FailureKind;
  /** Short description for the outbox row and the log; never contains the password. */
  message: string;
}

export function classifySendFailure(err: unknown): SendFailure {
  const e = err as { responseCode?: number; code?: string; message?: string; response?: string };
  const code = typeof e?.responseCode === 'number' ? e.responseCode : undefined;
  const text = (e?.response ?? e?.message ?? String(err)).slice(0, 500);
  if (code !== undefined && code >= 500 && code < 600) return { kind: 'permanent', message: `SMTP ${code}: ${text}` };
  if (code !== undefined && code >= 400 && code < 500) return { kind: 'temporary', message: `SMTP ${code}: ${text}` };
  return { kind: 'temporary', message: e?.code ? `${e.code}: ${text}` : text };
}

/** Delay before the next attempt after `attempts` failures: base × 2^(attempts−1), capped. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
}
