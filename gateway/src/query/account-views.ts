/**
 * Account views for queries: every query still reads the current view from the coordinator (one
 * linearizable read, decision 0009), and may meanwhile run on the last view read for the account,
 * so the read's round trip overlaps the query instead of preceding it. Whether that run's answer
 * may be given is QueryService's decision, made against the current view once it arrived
 * (docs/decisions/0027-fixed-query-path.md). Nothing here is ever answered from without that check.
 */
import type { AccountView, Coordinator } from '@strata/common';

/**
 * Accounts whose last view is kept (each holds the worker list: ~200 bytes a worker); beyond it,
 * the least recently read is forgotten and its next query waits for the read, as before 0027.
 */
const MAX_ACCOUNTS = 1_000;

export class AccountViews {
  private readonly last = new Map<string, AccountView>();

  constructor(private readonly coordinator: Coordinator) {}

  /**
   * Starts reading the account's current view (`current`; remembered once read) and gives the
   * last view read before, if any. `current` is the one a query's answer must agree with.
   */
  read(accountId: string): { current: Promise<AccountView>; last: AccountView | undefined } {
    const last = this.last.get(accountId);
    const current = this.coordinator.readAccountView(accountId).then((view) => {
      const kept = this.last.get(accountId);
      // Reads may finish out of order: keep the newest.
      if (!kept || kept.revision <= view.revision) {
        this.last.delete(accountId);
        this.last.set(accountId, view);
        if (this.last.size > MAX_ACCOUNTS) this.last.delete(this.last.keys().next().value as string);
      }
      return view;
    });
    return { current, last };
  }
}
