import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue, StatementType } from '@duckdb/node-api';
import { StrataError } from '@strata/common';
import { type Migration, runMigrations } from './migrations.js';

/** A SQL parameter value. Every user-supplied value reaches SQL only this way, never spliced. */
export type SqlParam = string | number | boolean | null | bigint;
export type Row = Record<string, unknown>;

/** Statements available inside a transaction (and for reads outside one). */
export interface SqlExecutor {
  all<T extends Row = Row>(sql: string, params?: SqlParam[]): Promise<T[]>;
  one<T extends Row = Row>(sql: string, params?: SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: SqlParam[]): Promise<void>;
}

/** Called inside each write transaction just before COMMIT; throwing aborts it (leader fencing). */
export type CommitGuard = () => Promise<void>;

/** A statement a write transaction ran that may have changed data, with its parameters. */
export interface RecordedStatement {
  sql: string;
  params: SqlParam[];
}

/**
 * What a write transaction goes through at its end (the replicated database log: the leader's
 * journal, docs/decisions/0017-database-standbys.md). `beforeCommit` runs inside the transaction
 * with every statement that was not a plain SELECT, in order, and an executor whose statements are
 * not recorded (for bookkeeping the hook keeps next to the data); throwing aborts the transaction.
 * `afterCommit` follows only when `beforeCommit` resolved, with whether COMMIT succeeded.
 */
export interface CommitHook {
  beforeCommit(changes: readonly RecordedStatement[], tx: SqlExecutor): Promise<void>;
  afterCommit(committed: boolean): void;
}

class ConnectionExecutor implements SqlExecutor {
  /**
   * @param recorded when given, every statement that is not a SELECT is appended to it after it ran
   *   (DuckDB reports the statement's type, so a write hidden in a CTE or a RETURNING is caught).
   */
  constructor(
    private readonly connection: DuckDBConnection,
    private readonly recorded?: RecordedStatement[],
  ) {}
  async all<T extends Row = Row>(sql: string, params: SqlParam[] = []): Promise<T[]> {
    const reader = await this.connection.runAndReadAll(sql, params as DuckDBValue[]);
    this.record(reader.statementType, sql, params);
    return reader.getRowObjectsJson() as T[];
  }
  async one<T extends Row = Row>(sql: string, params: SqlParam[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }
  async run(sql: string, params: SqlParam[] = []): Promise<void> {
    const result = await this.connection.run(sql, params as DuckDBValue[]);
    this.record(result.statementType, sql, params);
  }
  private record(type: StatementType, sql: string, params: SqlParam[]): void {
    if (this.recorded && type !== StatementType.SELECT) this.recorded.push({ sql, params: [...params] });
  }
}

/**
 * The master's relational store: one DuckDB file owned by the elected leader. Write transactions
 * are serialized in-process (DuckDB is single-writer per file and its optimistic concurrency would
 * otherwise abort concurrent writers); reads run on their own connections. Values come back as
 * JSON-safe values (BIGINT as strings): tables use INTEGER where a JS number is wanted.
 */
export class RelationalStore {
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readonly idle: DuckDBConnection[] = [];
  /** Connections handed out and not yet released (reads and the write in progress). */
  private readonly busy = new Set<DuckDBConnection>();
  /** Resolves when the last busy connection is released (set while closing). */
  private drained: (() => void) | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  private commitHook: CommitHook | undefined;

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly file: string,
  ) {}

  /** Opens (creating if needed) `<dir>/strata.duckdb` and applies pending migrations. */
  static async open(dir: string, options: { migrations: Migration[]; commitGuard?: CommitGuard }): Promise<RelationalStore> {
    const store = await RelationalStore.openFile(dir);
    const guard = options.commitGuard;
    if (guard) store.setCommitHook({ beforeCommit: () => guard(), afterCommit: () => undefined });
    try {
      await runMigrations(store, options.migrations);
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  /** The store file of a data directory. */
  static fileIn(dir: string): string {
    return path.join(dir, 'strata.duckdb');
  }

  /** Opens (creating if needed) `<dir>/strata.duckdb` as it is: no migrations, no commit hook. */
  static async openFile(dir: string): Promise<RelationalStore> {
    mkdirSync(dir, { recursive: true });
    const file = RelationalStore.fileIn(dir);
    const instance = await DuckDBInstance.create(file);
    return new RelationalStore(instance, file);
  }

  /** Every later write transaction goes through `hook` before it commits (see CommitHook). */
  setCommitHook(hook: CommitHook | undefined): void {
    this.commitHook = hook;
  }

  private async acquire(): Promise<DuckDBConnection> {
    if (this.closed) throw closedError();
    const connection = this.idle.pop() ?? (await this.instance.connect());
    if (this.closed) {
      connection.closeSync();
      throw closedError();
    }
    this.busy.add(connection);
    return connection;
  }

  private release(connection: DuckDBConnection): void {
    this.busy.delete(connection);
    if (this.closed || this.idle.length >= 8) connection.closeSync();
    else this.idle.push(connection);
    if (this.busy.size === 0) this.drained?.();
  }

  /**
   * Runs reads on a pooled connection (autocommit). With a commit hook installed (the replicated
   * leader) they run in a READ ONLY transaction: a write slipped in here would bypass the log and
   * make this copy differ from every standby's, so DuckDB refuses it instead.
   */
  async read<T>(fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
    if (!this.commitHook) return this.unlogged(fn);
    return this.unlogged(async (x) => {
      await x.run('BEGIN TRANSACTION READ ONLY');
      try {
        const result = await fn(x);
        await x.run('COMMIT');
        return result;
      } catch (err) {
        await x.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * A pooled connection as it is, outside the commit hook and the read-only guard: only for the
   * store's own bookkeeping that writes nothing to its data (the snapshot copies it into another
   * attached file). Application code reads with `read` and writes with `transaction`.
   */
  async unlogged<T>(fn: (sql: SqlExecutor) => Promise<T>): Promise<T> {
    const connection = await this.acquire();
    try {
      return await fn(new ConnectionExecutor(connection));
    } finally {
      this.release(connection);
    }
  }

  all<T extends Row = Row>(sql: string, params: SqlParam[] = []): Promise<T[]> {
    return this.read((x) => x.all<T>(sql, params));
  }

  one<T extends Row = Row>(sql: string, params: SqlParam[] = []): Promise<T | undefined> {
    return this.read((x) => x.one<T>(sql, params));
  }

  /**
   * Runs `fn` in one write transaction: everything it writes commits together or not at all.
   * Transactions run one at a time, in call order.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const run = async () => {
      const connection = await this.acquire();
      const plain = new ConnectionExecutor(connection);
      const hook = this.commitHook;
      const recorded: RecordedStatement[] = [];
      let hooked = false;
      await plain.run('BEGIN TRANSACTION');
      try {
        const result = await fn(hook ? new ConnectionExecutor(connection, recorded) : plain);
        if (hook) {
          await hook.beforeCommit(recorded, plain);
          hooked = true;
        }
        await plain.run('COMMIT');
        if (hooked) hook!.afterCommit(true);
        return result;
      } catch (err) {
        await plain.run('ROLLBACK').catch(() => undefined);
        if (hooked) hook!.afterCommit(false);
        throw err;
      } finally {
        this.release(connection);
      }
    };
    const result = this.writeQueue.then(run, run);
    this.writeQueue = result.catch(() => undefined);
    return result;
  }

  /**
   * Closes the database file for good: refuses new work, waits for queued writes and for reads in
   * progress to release their connections, then closes every connection and the instance. Only
   * then has DuckDB let go of the file (its lock and its write-ahead log), which is what the next
   * leader, in this process or another, needs before it opens the file. Every connection counts:
   * one left open keeps the database alive inside DuckDB after the instance handle is closed.
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    await this.writeQueue;
    if (this.busy.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    for (const c of this.idle.splice(0)) c.closeSync();
    this.instance.closeSync();
  }
}

function closedError(): StrataError {
  return new StrataError('unavailable', 'The relational store is closed.', { retryAfterSeconds: 1 });
}
