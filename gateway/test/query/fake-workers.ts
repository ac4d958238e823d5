/**
 * In-process stand-ins for workers: each holds its share of every table in its own in-memory
 * DuckDB, and runs fragments through the same code the real worker path uses, the fragment
 * check included (so every planner output in these tests must pass it). Rows are dealt
 * out round-robin, so a query's answer must not depend on how many workers there are.
 */
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { FragmentChecker, quoteIdentifier, registerKustoFunctions, runFragment } from '@strata/common';
import type { ColumnBatch } from '../../src/query/exec/batches.js';
import type { FragmentRunner } from '../../src/query/exec/executor.js';
import type { FragmentSpec, SingleWorkerSpec } from '../../src/query/plan/planner.js';
import { type CatalogTable, DUCKDB_TYPE, type KqlType, type SchemaCatalog } from '../../src/query/types.js';

export type Cell = string | number | bigint | boolean | null | Date | object;

export interface TestTable {
  name: string;
  columns: { name: string; type: KqlType }[];
  rows: Cell[][];
}

function literal(value: Cell, type: KqlType): { sql: string; param?: unknown } {
  if (value === null) return { sql: 'NULL' };
  switch (type) {
    case 'datetime':
      return { sql: 'make_timestamp(CAST(? AS BIGINT))', param: String(BigInt((value as Date).getTime()) * 1000n) };
    case 'dynamic':
      return { sql: 'CAST(? AS JSON)', param: JSON.stringify(value) };
    case 'long':
    case 'timespan':
      return { sql: 'CAST(? AS BIGINT)', param: String(value) };
    case 'real':
      return { sql: 'CAST(? AS DOUBLE)', param: String(value) };
    case 'bool':
      return { sql: 'CAST(? AS BOOLEAN)', param: String(value) };
    default:
      return { sql: `CAST(? AS ${DUCKDB_TYPE[type]})`, param: String(value) };
  }
}

/**
 * The table as a worker's scan gives it: with the fragment's storage-applied time bounds applied
 * exactly (its statement leaves those conjuncts out), as the real scan does (scan.ts).
 */
function relationOf(fragment: SingleWorkerSpec): string {
  const table = quoteIdentifier(fragment.table);
  const { fromUs, toUs } = fragment.storageTime ?? {};
  const conds = [
    ...(fromUs !== undefined ? [`"timestamp" >= make_timestamp(${fromUs}::BIGINT)`] : []),
    ...(toUs !== undefined ? [`"timestamp" <= make_timestamp(${toUs}::BIGINT)`] : []),
  ];
  return conds.length > 0 ? `(SELECT * FROM ${table} WHERE ${conds.join(' AND ')})` : table;
}

export class FakeWorkers {
  private readonly checker = new FragmentChecker();

  private constructor(
    private readonly instances: DuckDBInstance[],
    readonly catalog: SchemaCatalog,
  ) {}

  static async create(tables: TestTable[], workerCount: number): Promise<FakeWorkers> {
    const instances: DuckDBInstance[] = [];
    for (let w = 0; w < workerCount; w++) {
      const instance = await DuckDBInstance.create(':memory:');
      const c = await instance.connect();
      // As every worker's storage instance does at open (storage-engine.ts).
      registerKustoFunctions(c);
      for (const t of tables) {
        const cols = t.columns.map((col) => `${quoteIdentifier(col.name)} ${DUCKDB_TYPE[col.type]}`).join(', ');
        await c.run(`CREATE TABLE ${quoteIdentifier(t.name)} (${cols})`);
        const mine = t.rows.filter((_, i) => i % workerCount === w);
        for (const row of mine) {
          const parts = row.map((v, i) => literal(v, (t.columns[i] as { type: KqlType }).type));
          const params = parts.filter((p) => p.param !== undefined).map((p) => p.param as string);
          await c.run(`INSERT INTO ${quoteIdentifier(t.name)} VALUES (${parts.map((p) => p.sql).join(', ')})`, params);
        }
      }
      c.closeSync();
      instances.push(instance);
    }
    const catalog: SchemaCatalog = { tables: tables.map((t): CatalogTable => ({ name: t.name, columns: t.columns })) };
    return new FakeWorkers(instances, catalog);
  }

  /**
   * Fragments run on every worker concurrently; their rows are interleaved into one stream. With
   * one worker, whole queries run on it (the single-worker path), as with a real cluster.
   */
  readonly runner: FragmentRunner = Object.assign((fragment: FragmentSpec, signal: AbortSignal) => this.run(fragment, signal), {
    single: async (statement: SingleWorkerSpec, signal: AbortSignal) =>
      this.instances.length === 1 ? this.run(statement, signal) : undefined,
  });

  private async *run(fragment: SingleWorkerSpec, signal: AbortSignal): AsyncGenerator<ColumnBatch> {
    const connections: DuckDBConnection[] = [];
    try {
      const all: ColumnBatch[][] = await Promise.all(
        this.instances.map(async (instance) => {
          const c = await instance.connect();
          connections.push(c);
          const out: ColumnBatch[] = [];
          const table = this.catalog.tables.find((t) => t.name === fragment.table);
          const available = table ? table.columns.map((col) => col.name) : [];
          await this.checker.check(c, fragment.sql);
          for await (const b of runFragment(c, relationOf(fragment), available, fragment, signal)) out.push(b);
          return out;
        }),
      );
      for (const batches of all) yield* batches;
    } finally {
      for (const c of connections) c.closeSync();
    }
  }

  close(): void {
    for (const i of this.instances) i.closeSync();
  }
}
