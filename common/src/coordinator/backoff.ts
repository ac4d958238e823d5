/**
 * Delay before retry number `attempt` (0-based): exponential from `baseMs`, capped at `maxMs`,
 * with jitter (50–100 % of the step) so that candidates that failed together do not retry in step.
 */
export function backoffDelay(attempt: number, baseMs = 200, maxMs = 5_000): number {
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(step * (0.5 + Math.random() * 0.5));
}
