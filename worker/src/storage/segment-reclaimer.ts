import { unlink } from 'node:fs/promises';

/**
 * Deletes segment files that compaction replaced, but only once no open scan can still read them.
 *
 * Epoch-based: every catalog swap that retires files bumps the epoch. A scan registers before it
 * opens its snapshot, with the epoch of that moment; files retired at epoch E are deleted once
 * every scan registered before E has been released. A scan registered at E or later opened its
 * snapshot after the swap committed, so it never lists the retired files.
 */
export class SegmentReclaimer {
  private epoch = 0;
  private nextScanId = 0;
  private readonly openScans = new Map<number, number>();
  private readonly retired: { epoch: number; paths: string[] }[] = [];
  /** Files whose deletion has started but not finished. */
  private deleting = 0;

  /**
   * `beforeDelete` runs for each file just before it is deleted (a 'duckdb' segment file is
   * detached from the account's instance there: segment-format.ts).
   */
  constructor(
    private readonly onError: (path: string, err: unknown) => void = () => undefined,
    private readonly beforeDelete: (path: string) => Promise<void> = async () => undefined,
  ) {}

  /** Registers a scan about to open its snapshot; returns its release function. */
  registerScan(): () => void {
    const id = this.nextScanId++;
    this.openScans.set(id, this.epoch);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.openScans.delete(id);
      void this.collect();
    };
  }

  /** Called right after a catalog swap that removed `paths` has committed. */
  retire(paths: string[]): void {
    this.epoch++;
    this.retired.push({ epoch: this.epoch, paths });
    void this.collect();
  }

  /** Files not deleted yet: waiting for scans to finish, or being deleted. */
  get pendingCount(): number {
    return this.retired.reduce((n, r) => n + r.paths.length, this.deleting);
  }

  private oldestOpenEpoch(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const e of this.openScans.values()) oldest = Math.min(oldest, e);
    return oldest;
  }

  private async collect(): Promise<void> {
    const oldest = this.oldestOpenEpoch();
    const ready: string[] = [];
    for (let i = this.retired.length - 1; i >= 0; i--) {
      const r = this.retired[i]!;
      // Scans registered at epoch < r.epoch may hold the files retired at r.epoch.
      if (oldest >= r.epoch) {
        ready.push(...r.paths);
        this.retired.splice(i, 1);
      }
    }
    this.deleting += ready.length;
    await Promise.all(
      ready.map((p) =>
        this.beforeDelete(p)
          .then(() => unlink(p))
          .catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') this.onError(p, err);
          })
          .finally(() => {
            this.deleting--;
          }),
      ),
    );
  }
}
