import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { after, before } from 'mocha';
import { registerKustoFunctions } from '../query/kusto-udfs.js';

/**
 * An in-memory DuckDB for the enclosing mocha `describe`: opened in a `before` hook, closed in an
 * `after` hook (a `before` declared after this call runs after it, so it can fill tables). With
 * `kustoFunctions`, the engine's JS functions are registered on it as every worker and the
 * gateway's merge database register them, so SQL the binder writes runs here as it runs there.
 */
export function memoryDuckDB(options: { kustoFunctions?: boolean } = {}): { readonly conn: DuckDBConnection } {
  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
    if (options.kustoFunctions) registerKustoFunctions(conn);
  });
  after(() => {
    conn?.closeSync();
    instance?.closeSync();
    conn = undefined;
    instance = undefined;
  });
  return {
    get conn(): DuckDBConnection {
      if (!conn) throw new Error('memoryDuckDB: the connection is open only while the describe block runs');
      return conn;
    },
  };
}
