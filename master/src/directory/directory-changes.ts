import type { Coordinator, Logger } from '@strata/common';

/**
 * Tells the gateways that users, permissions or memberships changed, by bumping the directory
 * revision in the coordinator (docs/decisions/0049-directory-revision.md). Called AFTER the change
 * committed: a gateway that reads the new revision and asks again must find the change. A gateway
 * keeps a user's permissions only while the revision it reads is the one it read them at.
 *
 * A bump that fails (etcd unreachable) does not undo or fail the committed change: the caller's
 * change is done and retrying it would not help. Gateways then stop trusting their cache after the
 * backstop TTL (60 s); the failure is logged so an operator sees why a revocation lagged.
 */
export async function announceDirectoryChange(coordinator: Coordinator, log: Logger): Promise<void> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      await coordinator.bumpDirectoryRevision();
      return;
    } catch (err) {
      if (attempt === 2)
        log.error(
          { err: err instanceof Error ? err.message : String(err) },
          'directory revision not bumped: gateways may serve the old permissions until their 60 s backstop',
        );
    }
  }
}
