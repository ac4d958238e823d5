/**
 * Fault points for tests that need a process to fail at one exact moment. Each is armed only by an
 * environment variable of the process (nothing in the configuration or the API reaches them) and
 * is off when the variable is unset, which is how every deployment runs.
 */

/**
 * `STRATA_TEST_FAULT_KILL_AFTER_COMMIT=<prefix>`: the worker kills itself (SIGKILL, nothing more
 * runs) right after committing an append whose idempotency key starts with `<prefix>` and before
 * answering it — the "committed but never answered" case of docs/decisions/0029.
 */
export function killAfterCommitIfArmed(idempotencyKey: string): void {
  const prefix = process.env.STRATA_TEST_FAULT_KILL_AFTER_COMMIT;
  if (!prefix || !idempotencyKey.startsWith(prefix)) return;
  process.kill(process.pid, 'SIGKILL');
}
