import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { type ChannelPool, type Coordinator, errorFields, type Logger } from '@strata/common';
import { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { MasterPollLoop } from './master-poll-loop.js';
import { publishFile } from './storage/durable-file.js';
import type { Deleted } from './storage/lifecycle.js';
import { type RetentionPolicy, RetentionRules } from './storage/retention-rules.js';
import type { StorageEngine } from './storage/storage-engine.js';

/** How often the master is asked for the storage policy: a retention change applies within this. */
const STORAGE_POLICY_POLL_MS = 5_000;

interface PolicyFile {
  policy: RetentionPolicy;
  /** Schema drops already applied here, by drop id (so a drop is applied once). */
  appliedDrops: string[];
}

/**
 * Keeps a worker's data in step with the storage policy of the master (docs/api.md, "Data
 * lifecycle"): the retention rules go into force at once (scans stop returning older rows, the
 * retention pass deletes them) and schema drops this worker missed (it was down when the schema
 * was dropped) are applied. The last policy and the applied drops are kept in
 * `<dataPath>/storage-policy.json`, so a restarted worker enforces retention before the master
 * answers.
 */
export class StoragePolicyPoller {
  private readonly loop: MasterPollLoop;
  private readonly file: string;
  private state: PolicyFile;
  private failuresInRow = 0;
  private dropChain: Promise<void> = Promise.resolve();
  private writeChain: Promise<void> = Promise.resolve();

  constructor(
    coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly storage: StorageEngine,
    private readonly log: Logger,
    intervalMs = STORAGE_POLICY_POLL_MS,
  ) {
    this.file = storage.layout.workerFile('storage-policy.json');
    this.state = this.load();
    storage.setRetention(new RetentionRules(this.state.policy));
    this.loop = new MasterPollLoop(
      coordinator,
      intervalMs,
      (endpoint) => this.poll(endpoint, intervalMs),
      (err) => {
        this.failuresInRow++;
        if (this.failuresInRow === 5)
          this.log.warn(
            { reason: err instanceof Error ? err.message : String(err) },
            'cannot read the storage policy; keeping the last one',
          );
      },
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  pollNow(): Promise<void> {
    return this.loop.pollNow();
  }

  private load(): PolicyFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as PolicyFile;
      if (parsed && Array.isArray(parsed.appliedDrops) && parsed.policy && Array.isArray(parsed.policy.rules)) return parsed;
    } catch {
      // first start, or an unreadable file: start from "keep everything" until the master answers
    }
    return { policy: { defaultRetentionMs: 0, rules: [] }, appliedDrops: [] };
  }

  private async poll(endpoint: string, intervalMs: number): Promise<void> {
    const client = this.channels.client(StoragePolicyServiceService, endpoint);
    const answer = await client.getStoragePolicy({}, { timeoutMs: Math.max(1_000, intervalMs) });
    this.failuresInRow = 0;
    const policy: RetentionPolicy = {
      defaultRetentionMs: Number(answer.defaultRetentionMs),
      rules: answer.rules.map((r) => ({ accountId: r.accountId, schema: r.schema, retentionMs: Number(r.retentionMs) })),
    };
    for (const drop of answer.drops) {
      try {
        await this.applyDrop(drop);
      } catch (err) {
        this.log.error({ ...errorFields(err), accountId: drop.accountId, schema: drop.schema }, 'could not apply a schema drop');
      }
    }
    this.storage.setRetention(new RetentionRules(policy));
    // Drops the master no longer hands out (older than its memory) are forgotten here too.
    const known = new Set(answer.drops.map((d) => d.dropId));
    await this.update((state) => ({ policy, appliedDrops: state.appliedDrops.filter((id) => known.has(id)) }));
  }

  /**
   * Applies a schema drop once: from the poll, or at once when a gateway asks
   * (WorkerStorageService.ApplySchemaDrop). One at a time, so the two never both apply it (a second
   * application would delete rows written since the first).
   */
  applyDrop(drop: { dropId: string; accountId: string; schema: string }): Promise<Deleted | undefined> {
    const run = this.dropChain.then(async () => {
      if (this.state.appliedDrops.includes(drop.dropId)) return undefined;
      const gone = await this.storage.dropSchema(drop.accountId, drop.schema);
      await this.update((state) => ({ ...state, appliedDrops: [...state.appliedDrops, drop.dropId] }));
      return gone;
    });
    this.dropChain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Changes the kept state and writes it durably when it changed (one write at a time). */
  private update(change: (state: PolicyFile) => PolicyFile): Promise<void> {
    const run = this.writeChain.then(async () => {
      const next = change(this.state);
      if (JSON.stringify(next) === JSON.stringify(this.state)) return;
      this.state = next;
      const tmp = `${this.file}.tmp`;
      await writeFile(tmp, JSON.stringify(next));
      await publishFile(tmp, this.file);
    });
    this.writeChain = run.catch((err) => this.log.error(errorFields(err), 'could not save the storage policy'));
    return run;
  }
}
