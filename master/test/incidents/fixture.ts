import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AlertService } from '../../src/alerts/alert-service.js';
import { DirectoryRepository } from '../../src/directory/directory-repository.js';
import { GroupService } from '../../src/groups/group-service.js';
import { IncidentService } from '../../src/incidents/incident-service.js';
import { ALL_MIGRATIONS } from '../../src/store/all-migrations.js';
import { RelationalStore } from '../../src/store/relational-store.js';

export const ACCOUNT = '11111111-1111-4111-8111-111111111111';
export const OTHER_ACCOUNT = '22222222-2222-4222-8222-222222222222';
/** Members of ACCOUNT. */
export const ALICE = 'aaaaaaaa-0000-4000-8000-000000000001';
export const BOB = 'bbbbbbbb-0000-4000-8000-000000000002';
export const CAROL = 'cccccccc-0000-4000-8000-000000000003';
/** Shares Carol's mailbox (recipient de-duplication by address). */
export const CAROL_ALIAS = 'cccccccc-0000-4000-8000-000000000004';
/** Member of OTHER_ACCOUNT only. */
export const MALLORY = 'dddddddd-0000-4000-8000-000000000005';
/** Member of ACCOUNT without an e-mail address. */
export const NOMAIL = 'eeeeeeee-0000-4000-8000-000000000006';

/** A relational store in a temp dir with two accounts and a few users. */
export class Fixture {
  readonly incidents: IncidentService;
  readonly groups: GroupService;
  readonly alerts: AlertService;
  readonly directory: DirectoryRepository;

  private constructor(
    readonly store: RelationalStore,
    readonly dir: string,
  ) {
    this.incidents = new IncidentService(store);
    this.groups = new GroupService(store);
    this.alerts = new AlertService(store, this.incidents);
    this.directory = new DirectoryRepository(store);
  }

  static async create(): Promise<Fixture> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'strata-incidents-'));
    const store = await RelationalStore.open(dir, { migrations: ALL_MIGRATIONS });
    const f = new Fixture(store, dir);
    const d = f.directory;
    await d.upsertAccount({ accountId: ACCOUNT, accountName: 'acme', createdAt: '' });
    await d.upsertAccount({ accountId: OTHER_ACCOUNT, accountName: 'other', createdAt: '' });
    const users: [string, string, string, string][] = [
      [ALICE, 'alice', 'alice@example.test', ACCOUNT],
      [BOB, 'bob', 'bob@example.test', ACCOUNT],
      [CAROL, 'carol', 'carol@example.test', ACCOUNT],
      [CAROL_ALIAS, 'carol2', 'Carol@Example.test', ACCOUNT],
      [MALLORY, 'mallory', 'mallory@example.test', OTHER_ACCOUNT],
      [NOMAIL, 'nomail', '', ACCOUNT],
    ];
    for (const [userId, userName, email, account] of users) {
      await d.upsertUser({ userId, userName, firstName: '', lastName: '', email, createdAt: '' }, '');
      await d.setPermissions(userId, account, ['Service.Incident.Editor']);
    }
    return f;
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Saves as Alice with a user owner unless the input says otherwise. */
  put(incidentId: string, input: Record<string, string | undefined>, actor = ALICE) {
    return this.incidents.putIncident({
      accountId: ACCOUNT,
      incidentId,
      input: { title: 'Disk full', ownerType: 'USER', ownerId: ALICE, ...input },
      actor: { type: 'USER', id: actor },
      creatorUserId: actor,
    });
  }

  async outbox(incidentId?: string) {
    return this.store.all<{ event_type: string; recipient_user_id: string; recipient_address: string; status: string }>(
      incidentId
        ? 'SELECT * FROM notification_outbox WHERE incident_id = $1 ORDER BY created_at, recipient_address'
        : 'SELECT * FROM notification_outbox ORDER BY created_at, recipient_address',
      incidentId ? [incidentId] : [],
    );
  }
}

/** A fresh incident id per call (tests share one store). */
export const newId = (): string => randomUUID();
