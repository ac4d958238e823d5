import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/**
 * Idle connections of one account instance for query snapshots (scan.ts), kept between queries
 * instead of a connect and a close per query (~0.1 ms of the worker's thread each on a small
 * query, decision 0032).
 *
 * A connection comes back only after its snapshot's ROLLBACK succeeded: it then holds no
 * transaction, no prepared statement (runFragment destroys them) and no state a fragment could
 * have left (fragments are one checked read-only SELECT; the instance's settings are locked,
 * account-instance.ts). A connection whose ROLLBACK failed (an interrupt, a broken connection) is
 * closed instead. Attachments and settings are the instance's, seen by every connection alike.
 */
export class ScanConnections {
  /** Idle connections beyond this many are closed: enough for the queries a worker runs at once. */
  static readonly MAX_IDLE = 4;
  private readonly idle: DuckDBConnection[] = [];
  private closed = false;

  constructor(private readonly instance: DuckDBInstance) {}

  /** An idle connection, or a new one. */
  async take(): Promise<DuckDBConnection> {
    return this.idle.pop() ?? (await this.instance.connect());
  }

  /** Gives back a connection whose snapshot has ended (`clean`), or closes it. */
  give(connection: DuckDBConnection, clean: boolean): void {
    if (clean && !this.closed && this.idle.length < ScanConnections.MAX_IDLE) this.idle.push(connection);
    else connection.closeSync();
  }

  /** Closes the idle connections (before the instance closes); later ones are closed when given back. */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.closeSync();
  }
}
