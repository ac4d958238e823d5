/**
 * The whitelist check every fragment passes before a worker runs it, whoever sent it: exactly
 * one read-only SELECT whose tables are only the fragment source (FRAGMENT_SOURCE, bound by the
 * worker to the account's own scan) and the fragment's own CTEs, with no file-reading or
 * catalog table functions and no function that reads the process's state.
 *
 * DuckDB parses the text itself (`json_serialize_sql`, which serializes SELECT statements only
 * and refuses COPY, ATTACH, SET, PRAGMA, …), so the check sees exactly what DuckDB would run, not
 * a second parser's idea of it. The walk then whitelists table references; see
 * docs/decisions/0008-fragment-safety.md. It is one layer: the worker's DuckDB is also confined
 * (no file outside its data directory, configuration locked), so a gap here is not a file read.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { StrataError } from '../errors.js';
import { FRAGMENT_SOURCE } from './fragment-exec.js';

/** Table functions a fragment may call: they generate rows and read nothing. */
const ALLOWED_TABLE_FUNCTIONS = new Set(['generate_series', 'range', 'unnest']);

/** Table reference kinds a fragment may use; anything else (SHOW, PIVOT, …) is refused. */
const ALLOWED_TABLE_REFS = new Set(['BASE_TABLE', 'TABLE_FUNCTION', 'JOIN', 'SUBQUERY', 'EXPRESSION_LIST', 'EMPTY']);

/** Query node kinds (the body of a SELECT). Recursive CTEs are not something the planner writes. */
const ALLOWED_QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE']);

/**
 * Scalar functions that read the process's state (settings, variables, the environment) or
 * files; the planner never writes them. Names are matched in lower case, also by prefix.
 */
const REFUSED_FUNCTIONS = new Set(['current_setting', 'getenv', 'getvariable', 'set_variable', 'json_serialize_sql']);
const REFUSED_FUNCTION_PREFIXES = ['read_', 'duckdb_', 'pragma_', 'parquet_', 'glob', 'query', 'sniff_', 'sql_'];

/** Distinct accepted texts remembered so a repeated fragment is not parsed again. */
const ACCEPTED_CACHE_SIZE = 512;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function refuse(detail: string): never {
  throw new StrataError('invalid', `The fragment is not a permitted statement: ${detail}.`);
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: Json | undefined): string {
  return typeof v === 'string' ? v : '';
}

/**
 * Walks a serialized statement. `visible` are the relation names a table reference may name at
 * this point: the fragment source and the CTEs in scope (each CTE sees only the ones before it).
 */
class FragmentWalker {
  statement(stmt: Json | undefined, visible: ReadonlySet<string>): void {
    if (!isObject(stmt) || !isObject(stmt.node)) refuse('a statement has no query');
    this.queryNode(stmt.node, visible);
  }

  private queryNode(node: JsonObject, outer: ReadonlySet<string>): void {
    const type = text(node.type);
    if (!ALLOWED_QUERY_NODES.has(type)) refuse(`${type || 'an unknown query'} is not allowed`);
    const visible = new Set(outer);
    const ctes = isObject(node.cte_map) ? node.cte_map.map : undefined;
    if (Array.isArray(ctes)) {
      for (const entry of ctes) {
        if (!isObject(entry) || !isObject(entry.value)) refuse('a CTE has no query');
        // A CTE sees the ones before it, not itself (no recursion) and not later ones.
        this.statement(entry.value.query, visible);
        visible.add(text(entry.key).toLowerCase());
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'cte_map' || key === 'type') continue;
      if (key === 'from_table') this.tableRef(value, visible);
      else if (key === 'left' || key === 'right') {
        // Set operations: both sides are query nodes.
        if (!isObject(value)) refuse('a set operation has no side');
        this.queryNode(value, visible);
      } else this.any(value, visible);
    }
  }

  private tableRef(ref: Json | undefined, visible: ReadonlySet<string>): void {
    if (!isObject(ref)) refuse('a table reference is malformed');
    const type = text(ref.type);
    if (!ALLOWED_TABLE_REFS.has(type)) refuse(`${type || 'an unknown'} table reference is not allowed`);
    if (ref.sample !== null && ref.sample !== undefined) refuse('TABLESAMPLE is not allowed');
    switch (type) {
      case 'BASE_TABLE': {
        const name = text(ref.table_name).toLowerCase();
        if (text(ref.schema_name) !== '' || text(ref.catalog_name) !== '')
          refuse(`the table '${text(ref.table_name)}' is qualified`);
        if (ref.at_clause !== null && ref.at_clause !== undefined) refuse('AT clauses are not allowed');
        if (!visible.has(name)) refuse(`the table '${text(ref.table_name)}' is not the fragment's source`);
        return;
      }
      case 'TABLE_FUNCTION': {
        const fn = isObject(ref.function) ? ref.function : undefined;
        const name = text(fn?.function_name).toLowerCase();
        if (!fn || !ALLOWED_TABLE_FUNCTIONS.has(name) || text(fn.schema) !== '' || text(fn.catalog) !== '')
          refuse(`the table function '${name}' is not allowed`);
        this.any(fn.children, visible);
        return;
      }
      case 'JOIN':
        this.tableRef(ref.left, visible);
        this.tableRef(ref.right, visible);
        this.any(ref.condition, visible);
        return;
      case 'SUBQUERY':
        this.statement(ref.subquery, visible);
        return;
      case 'EXPRESSION_LIST':
        this.any(ref.values, visible);
        return;
      default:
        return; // EMPTY
    }
  }

  /** Any other part: expressions, modifiers, lists. Finds subqueries and function calls in them. */
  private any(value: Json | undefined, visible: ReadonlySet<string>): void {
    if (Array.isArray(value)) {
      for (const v of value) this.any(v, visible);
      return;
    }
    if (!isObject(value)) return;
    const cls = text(value.class);
    if (cls === 'SUBQUERY') {
      this.statement(value.subquery, visible);
      this.any(value.child, visible);
      return;
    }
    if (cls === 'FUNCTION' || cls === 'AGGREGATE' || cls === 'WINDOW') {
      const name = text(value.function_name).toLowerCase();
      if (REFUSED_FUNCTIONS.has(name) || REFUSED_FUNCTION_PREFIXES.some((p) => name.startsWith(p)))
        refuse(`the function '${name}' is not allowed`);
      if ((text(value.schema) !== '' && text(value.schema) !== 'main') || text(value.catalog) !== '')
        refuse(`the function '${name}' is qualified`);
    }
    if (text(value.type) === 'SELECT_NODE' || text(value.type) === 'SET_OPERATION_NODE') {
      this.queryNode(value, visible);
      return;
    }
    for (const v of Object.values(value)) this.any(v, visible);
  }
}

/**
 * Refuses text whose quoting the parameter inliner (param-literals.ts) would read differently from
 * DuckDB: escape strings (E'…', where a backslash escapes a quote), other prefixed strings,
 * dollar-quoted strings and comments. Inside any of these an inlined value could end the quoted
 * run and become SQL; the planner writes none of them (its values are parameters).
 */
function assertPlainQuoting(sql: string): void {
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (ch === "'" || ch === '"') {
      if (ch === "'" && i > 0 && /[A-Za-z0-9_&]/.test(sql[i - 1] as string)) refuse('prefixed string literals are not allowed');
      const close = sql.indexOf(ch, i + 1);
      if (close < 0) refuse('a quoted run is not closed');
      // A doubled quote continues the run.
      i = close + 1;
      if (sql[i] === ch) continue;
      continue;
    }
    if (ch === '$' && !/[0-9]/.test(sql[i + 1] ?? '')) refuse('dollar-quoted strings are not allowed');
    if ((ch === '-' && sql[i + 1] === '-') || (ch === '/' && sql[i + 1] === '*')) refuse('comments are not allowed');
    i++;
  }
}

/**
 * Checks fragment statements on a DuckDB connection (the parse runs there; the connection is
 * not changed). Accepted texts are remembered, so the cost is paid once per distinct fragment.
 */
export class FragmentChecker {
  private readonly accepted = new Map<string, true>();

  /** Throws StrataError('invalid') unless `sql` is one permitted SELECT over the fragment source. */
  async check(connection: DuckDBConnection, sql: string): Promise<void> {
    if (this.accepted.has(sql)) {
      // Most recently used last, so the oldest entry is the first to go.
      this.accepted.delete(sql);
      this.accepted.set(sql, true);
      return;
    }
    assertPlainQuoting(sql);
    const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
    const serialized = reader.getRows()[0]?.[0];
    let parsed: Json;
    try {
      parsed = JSON.parse(String(serialized)) as Json;
    } catch {
      refuse('it could not be parsed');
    }
    if (!isObject(parsed)) refuse('it could not be parsed');
    if (parsed.error === true)
      refuse(`it is not a single SELECT DuckDB can read (${text(parsed.error_message) || text(parsed.error_type)})`);
    const statements = parsed.statements;
    if (!Array.isArray(statements) || statements.length !== 1) refuse('exactly one statement is allowed');
    new FragmentWalker().statement(statements[0], new Set([FRAGMENT_SOURCE]));
    this.accepted.set(sql, true);
    if (this.accepted.size > ACCEPTED_CACHE_SIZE) {
      const oldest = this.accepted.keys().next().value;
      if (oldest !== undefined) this.accepted.delete(oldest);
    }
  }
}
