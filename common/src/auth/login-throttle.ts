import { StrataError } from '../errors.js';

/**
 * Slows down password guessing per user name: after FREE_FAILURES failed sign-ins within the
 * window, further attempts for that name are refused with 429 and Retry-After for a delay that
 * doubles with each failure (1 s, 2 s, 4 s, … up to 5 minutes). A success clears the record.
 * Counted in memory per process (a restart forgets); documented in docs/api.md. Both the gateway
 * (per sign-in route) and the master (per VerifyPassword call, where the password is checked, so
 * that a caller bypassing the gateway or spreading guesses over gateways is slowed as well) use it.
 */
export class LoginThrottle {
  static readonly FREE_FAILURES = 5;
  static readonly WINDOW_MS = 15 * 60_000;
  static readonly MAX_DELAY_MS = 5 * 60_000;
  private readonly failures = new Map<string, { count: number; last: number; blockedUntil: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  private key(userName: string): string {
    return userName.trim().toLowerCase();
  }

  /** Throws 429 while the user name is in a back-off period. */
  check(userName: string): void {
    const entry = this.failures.get(this.key(userName));
    if (!entry) return;
    const now = this.now();
    if (now - entry.last > LoginThrottle.WINDOW_MS) {
      this.failures.delete(this.key(userName));
      return;
    }
    if (entry.blockedUntil > now) {
      const seconds = Math.ceil((entry.blockedUntil - now) / 1000);
      throw new StrataError('resource_exhausted', `Too many failed sign-ins for this user. Try again in ${seconds} seconds.`, {
        retryAfterSeconds: seconds,
      });
    }
  }

  recordFailure(userName: string): void {
    const key = this.key(userName);
    const now = this.now();
    const prev = this.failures.get(key);
    const count = prev && now - prev.last <= LoginThrottle.WINDOW_MS ? prev.count + 1 : 1;
    const over = count - LoginThrottle.FREE_FAILURES;
    const delay = over > 0 ? Math.min(1000 * 2 ** (over - 1), LoginThrottle.MAX_DELAY_MS) : 0;
    if (this.failures.size > 100_000) this.failures.clear();
    this.failures.set(key, { count, last: now, blockedUntil: now + delay });
  }

  recordSuccess(userName: string): void {
    this.failures.delete(this.key(userName));
  }
}
