import { createHash } from 'node:crypto';
import { type Etcd3, Range } from 'etcd3';
import { StrataError } from '../errors.js';
import type { Candidacy, Unsubscribe } from './coordinator.js';
import { EtcdCandidacy } from './etcd-candidacy.js';
import type { LogEntry, ReplicatedLog, SnapshotInfo } from './replicated-log.js';

/** Bytes per snapshot chunk: well under etcd's default request limit of 1.5 MiB. */
export const SNAPSHOT_CHUNK_BYTES = 512 * 1024;

/** Fixed-width decimal, so keys sort by number. */
const pad = (n: number) => String(n).padStart(20, '0');

/**
 * A ReplicatedLog on etcd. Keys under `<root>` (e.g. `/strata/log/database/`):
 *  - `entries/<seq>`: one appended entry each, written with the fencing check in one Txn;
 *  - `snapshot`: the current SnapshotInfo (JSON, without `revision`), written fenced;
 *  - `snapshots/<logId>/<seq>/<chunk>`: the snapshot bytes, written before the record names them.
 * No key has a lease: the log must outlive every process.
 */
export class EtcdReplicatedLog implements ReplicatedLog {
  constructor(
    private readonly client: Etcd3,
    /** Full key prefix, ending with `/`. */
    private readonly root: string,
    private readonly watchPrefix: (prefix: string, load: () => Promise<string>, emit: () => void) => Unsubscribe,
  ) {}

  private entryKey(seq: number): string {
    return `${this.root}entries/${pad(seq)}`;
  }

  private get snapshotKey(): string {
    return `${this.root}snapshot`;
  }

  private chunkPrefix(logId: string, seq: number): string {
    return `${this.root}snapshots/${logId}/${pad(seq)}/`;
  }

  async append(candidacy: Candidacy, seq: number, value: Buffer): Promise<void> {
    const key = this.entryKey(seq);
    await fenced(candidacy).commitFenced(
      [{ key, target: 'Create', value: 0 }],
      [this.client.put(key).value(value)],
      `appending entry ${seq}`,
    );
  }

  async read(after: number, limit: number): Promise<LogEntry[]> {
    const { kvs } = await this.client
      .getAll()
      .inRange(new Range(this.entryKey(after + 1), Range.prefix(`${this.root}entries/`).end))
      .sort('Key', 'Ascend')
      .limit(limit)
      .exec();
    return kvs.map((kv) => ({ seq: Number(kv.key.toString().slice(-20)), value: kv.value }));
  }

  async snapshot(): Promise<SnapshotInfo | undefined> {
    const { kvs } = await this.client.get(this.snapshotKey).exec();
    const kv = kvs[0];
    if (!kv) return undefined;
    return { ...(JSON.parse(kv.value.toString()) as Omit<SnapshotInfo, 'revision'>), revision: String(kv.mod_revision) };
  }

  async readSnapshot(info: SnapshotInfo): Promise<Buffer> {
    const prefix = this.chunkPrefix(info.logId, info.seq);
    const parts: Buffer[] = [];
    // One chunk per request: a whole snapshot in one answer could exceed gRPC's 4 MB message limit.
    for (let i = 0; i < info.chunks; i++) {
      const part = await this.client.get(`${prefix}${pad(i)}`).buffer();
      if (!part) throw new StrataError('unavailable', `snapshot ${info.seq} of the database log was replaced while reading it`);
      parts.push(part);
    }
    const data = Buffer.concat(parts);
    if (createHash('sha256').update(data).digest('hex') !== info.sha256) {
      throw new StrataError('unavailable', `snapshot ${info.seq} of the database log does not match its hash`);
    }
    return data;
  }

  async publishSnapshot(
    candidacy: Candidacy,
    snapshot: { logId: string; seq: number; data: Buffer; origin: SnapshotInfo['origin'] },
    replaces: SnapshotInfo | undefined,
  ): Promise<SnapshotInfo> {
    const { logId, seq, data, origin } = snapshot;
    const prefix = this.chunkPrefix(logId, seq);
    const chunks = Math.max(1, Math.ceil(data.length / SNAPSHOT_CHUNK_BYTES));
    // The chunks first, unfenced: until the record below names them they are inert.
    for (let i = 0; i < chunks; i++) {
      await this.client
        .put(`${prefix}${pad(i)}`)
        .value(data.subarray(i * SNAPSHOT_CHUNK_BYTES, (i + 1) * SNAPSHOT_CHUNK_BYTES))
        .exec();
    }
    const record: Omit<SnapshotInfo, 'revision'> = {
      logId,
      seq,
      chunks,
      bytes: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
      term: candidacy.term ?? 0,
      createdAt: new Date().toISOString(),
      origin,
    };
    const handle = fenced(candidacy);
    await handle.commitFenced(
      [
        replaces
          ? { key: this.snapshotKey, target: 'Mod', value: replaces.revision }
          : { key: this.snapshotKey, target: 'Create', value: 0 },
      ],
      [this.client.put(this.snapshotKey).value(JSON.stringify(record))],
      `publishing snapshot ${seq}`,
    );
    const published = await this.snapshot();
    // Now the log may shrink: entries the snapshot contains, and the chunks of older snapshots.
    await this.client
      .delete()
      .inRange(new Range(`${this.root}entries/`, this.entryKey(seq + 1)))
      .exec();
    const all = Range.prefix(`${this.root}snapshots/`);
    await this.client.delete().inRange(new Range(all.start, prefix)).exec();
    await this.client
      .delete()
      .inRange(new Range(Range.prefix(prefix).end, all.end))
      .exec();
    return published ?? { ...record, revision: '0' };
  }

  watch(callback: () => void): Unsubscribe {
    // The state watched: the snapshot record's revision and the last entry's key.
    const load = async () => {
      const [snap, last] = await Promise.all([
        this.client.get(this.snapshotKey).exec(),
        this.client.getAll().prefix(`${this.root}entries/`).sort('Key', 'Descend').limit(1).keys(),
      ]);
      return `${snap.kvs[0]?.mod_revision ?? '-'} ${last[0] ?? '-'}`;
    };
    return this.watchPrefix(this.root, load, callback);
  }
}

function fenced(candidacy: Candidacy): EtcdCandidacy {
  if (!(candidacy instanceof EtcdCandidacy)) throw new Error('the database log needs a candidacy of the etcd coordinator');
  return candidacy;
}
