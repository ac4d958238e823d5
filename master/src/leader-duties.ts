import { accountCompactionMaxFileSize } from './compaction/account-max-file-size.js';
import { CompactionDuty } from './compaction/compaction-duty.js';
import { announceDirectoryChange } from './directory/directory-changes.js';
import { DirectoryRepository } from './directory/directory-repository.js';
import { applyProvisioning } from './directory/provisioning.js';
import type { LeaderDuty, LeaderState } from './leader-state.js';
import { storedMailSettings } from './notifications/mail-settings.js';
import { MailerDuty } from './notifications/mailer-duty.js';
import { ReplicaRecoveryDuty } from './replication/replica-recovery-duty.js';
import { PurgeDuty } from './storage-policy/purge-duty.js';
import { SnapshotDuty } from './store/replication/snapshot-duty.js';
import { WebhookDuty } from './webhooks/webhook-duty.js';

/** Applies setupService provisioning once per election (idempotent). */
class ProvisioningDuty implements LeaderDuty {
  readonly name = 'provisioning';
  async start(state: LeaderState): Promise<void> {
    await applyProvisioning(state.config.setupService, state.store, new DirectoryRepository(state.store), state.log);
    // Provisioning adds users and permissions: gateways that cached a user's before must see them.
    if (state.config.setupService.enable && state.config.setupService.provision)
      await announceDirectoryChange(state.coordinator, state.log);
  }
  async stop(): Promise<void> {}
}

/** Every leader duty, started in this order after election and stopped in reverse. */
export function leaderDuties(): LeaderDuty[] {
  return [
    new ProvisioningDuty(),
    new MailerDuty((state) => storedMailSettings(state.store)),
    new WebhookDuty(),
    // Each account's Service.Storage.Compaction.MaxFileSize, read when a job's files are selected.
    new CompactionDuty({
      maxFileSize: (accountId, state) => accountCompactionMaxFileSize(state.store, accountId),
    }),
    new PurgeDuty(),
    new SnapshotDuty(),
    new ReplicaRecoveryDuty(),
  ];
}
