/**
 * The retention in force for each table, from the storage policy the master hands out
 * (StoragePolicyService.GetStoragePolicy): a schema's override, else its account's
 * `Service.Storage.Retention`, else the system default. 0 anywhere means "keep forever" (an
 * override of a shorter default). Swapped as a whole when a new policy arrives.
 */
export interface RetentionPolicy {
  defaultRetentionMs: number;
  rules: { accountId: string; schema: string; retentionMs: number }[];
}

export class RetentionRules {
  private readonly accounts = new Map<string, number>();
  private readonly schemas = new Map<string, number>();

  constructor(private readonly policy: RetentionPolicy = { defaultRetentionMs: 0, rules: [] }) {
    for (const r of policy.rules) {
      const account = r.accountId.toLowerCase();
      if (r.schema === '') this.accounts.set(account, r.retentionMs);
      else this.schemas.set(`${account}\u0000${r.schema}`, r.retentionMs);
    }
  }

  /** Milliseconds of data kept for a schema of an account; undefined: forever. */
  retentionMs(accountId: string, schema: string): number | undefined {
    const account = accountId.toLowerCase();
    const ms = this.schemas.get(`${account}\u0000${schema}`) ?? this.accounts.get(account) ?? this.policy.defaultRetentionMs;
    return ms > 0 ? ms : undefined;
  }

  /** The oldest timestamp (µs since the epoch) a query may see at `nowMs`; undefined: no limit. */
  cutoffUs(accountId: string, schema: string, nowMs = Date.now()): number | undefined {
    const ms = this.retentionMs(accountId, schema);
    return ms === undefined ? undefined : (nowMs - ms) * 1000;
  }

  /** Whether this and `other` keep the same data (to skip work on an unchanged policy). */
  sameAs(other: RetentionRules): boolean {
    return JSON.stringify(this.policy) === JSON.stringify(other.policy);
  }
}
