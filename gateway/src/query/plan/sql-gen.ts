/**
 * Writes a `Rel` tree as one DuckDB statement: a chain of CTEs, one per pipeline step, so step
 * order is explicit. Row order after `sort` (and `range`, `datatable`) is carried explicitly: the
 * sort keys become hidden columns that later order-preserving steps keep, and the order is applied
 * where it matters — in a `limit` (ORDER BY … LIMIT, which DuckDB runs as a top-N) and in the
 * final select — because SQL does not promise that a CTE's ORDER BY survives the next step.
 */

import { ticksTextSql } from '../semantic/datetime-ticks.js';
import { epochMicrosOf } from '../semantic/epoch-bin-key.js';
import { type Column, type Rel, ROW_ORDER } from '../semantic/rel.js';
import { termFoldScanColumn } from '../semantic/term-fold-subject.js';
import { Ident, ident, int, join, type Param, Sql, sql, substitute } from '../sql/sql.js';
import { DUCKDB_TYPE, type KqlType } from '../types.js';

/** The wire type of a DuckDB type used inside statements. */
export function wireTypeOf(duckType: string): string {
  return duckType === 'UUID' || duckType === 'JSON' ? 'VARCHAR' : duckType;
}

const DUCK_TYPE_SQL: Record<string, Sql> = {
  VARCHAR: sql`VARCHAR`,
  BIGINT: sql`BIGINT`,
  DOUBLE: sql`DOUBLE`,
  BOOLEAN: sql`BOOLEAN`,
  TIMESTAMP: sql`TIMESTAMP`,
  UUID: sql`UUID`,
  JSON: sql`JSON`,
};

export function duckTypeSql(duckType: string): Sql {
  const t = Object.hasOwn(DUCK_TYPE_SQL, duckType) ? DUCK_TYPE_SQL[duckType] : undefined;
  if (!t) throw new Error(`unexpected DuckDB type ${duckType}`);
  return t;
}

const canonical = (t: KqlType): Sql => duckTypeSql(DUCKDB_TYPE[t]);

/** The DuckDB type of a column or sort key: BIGINT for a datetime carried as ticks (decision 0036). */
export const duckTypeOf = (c: { type: KqlType; ticks?: boolean | undefined }): string =>
  c.ticks ? 'BIGINT' : DUCKDB_TYPE[c.type];

/** Reads a scanned storage column as the engine's canonical type (a no-op cast when it already is). */
function scanColumnSql(name: string, type: KqlType): Sql {
  const col = sql`${ident(name)}`;
  if (type === 'guid' || type === 'dynamic') return sql`TRY_CAST(${col} AS ${canonical(type)})`;
  return sql`CAST(${col} AS ${canonical(type)})`;
}

/** Restores a wire value to its canonical type. */
function fromWire(id: string, duckType: string): Sql {
  const v = sql`${ident(id)}`;
  if (duckType === 'UUID') return sql`CAST(${v} AS UUID)`;
  if (duckType === 'JSON') return sql`CAST(${v} AS JSON)`;
  return v;
}

export interface OrderKey {
  id: string;
  duckType: string;
  descending: boolean;
  nullsFirst: boolean;
}

export interface Generated {
  name: string;
  visible: Column[];
  /** Partial aggregate states (or a fragment's carried columns). */
  extra: { id: string; duckType: string }[];
  /** Current row order, as hidden (or visible) columns. */
  order?: OrderKey[];
}

export interface GenOptions {
  /** The relation a scan reads. */
  scanSource: (table: string) => Sql;
  /** The temp table holding a fragment's rows in the merge database. */
  fragmentSource: (index: number) => Sql;
  /** Shared by every statement of one plan, so hidden order columns never collide. */
  orderIds: { next: number };
}

/** A scan whose column list is decided once the statement is complete (only used columns). */
interface PendingScan {
  index: number;
  name: string;
  rel: Extract<Rel, { kind: 'scan' }>;
  used?: Column[];
}

/** Names of every identifier in a SQL tree. */
function collectIdents(node: Sql | Ident | Param, into: Set<string>): void {
  if (node instanceof Ident) into.add(node.name);
  else if (node instanceof Sql) for (const v of node.values) collectIdents(v, into);
}

export class SqlGenerator {
  private readonly ctes: (Sql | PendingScan)[] = [];
  private counter = 0;

  constructor(private readonly options: GenOptions) {}

  private add(body: Sql): string {
    const name = `s${this.counter++}`;
    this.ctes.push(sql`${ident(name)} AS (${body})`);
    return name;
  }

  /** The columns each scan of the statement reads (after statement()). */
  scanColumns(): { rel: Extract<Rel, { kind: 'scan' }>; columns: Column[] }[] {
    return this.ctes.flatMap((c) => (c instanceof Sql ? [] : [{ rel: c.rel, columns: c.used ?? c.rel.columns }]));
  }

  orderBy(order: OrderKey[] | undefined): Sql {
    if (!order || order.length === 0) return sql``;
    return sql` ORDER BY ${join(
      order.map(
        (o) => sql`${ident(o.id)}${o.descending ? sql` DESC` : sql` ASC`}${o.nullsFirst ? sql` NULLS FIRST` : sql` NULLS LAST`}`,
      ),
      ', ',
    )}`;
  }

  gen(rel: Rel): Generated {
    switch (rel.kind) {
      case 'scan': {
        // Written in statement(), with only the columns later steps use.
        const name = `s${this.counter++}`;
        this.ctes.push({ index: this.ctes.length, name, rel });
        return { name, visible: rel.columns, extra: [] };
      }
      case 'fragment': {
        const cols = [
          ...rel.columns.map((c) => sql`${fromWire(c.id, duckTypeOf(c))} AS ${ident(c.id)}`),
          ...rel.extra.map((e) => sql`${fromWire(e.id, e.duckType)} AS ${ident(e.id)}`),
        ];
        const name = this.add(sql`SELECT ${join(cols, ', ')} FROM ${this.options.fragmentSource(rel.index)}`);
        return { name, visible: rel.columns, extra: rel.extra };
      }
      case 'values': {
        if (rel.rows.length === 0) {
          const nulls = rel.columns.map((c) => sql`CAST(NULL AS ${duckTypeSql(duckTypeOf(c))}) AS ${ident(c.id)}`);
          return { name: this.add(sql`SELECT ${join(nulls, ', ')} WHERE false`), visible: rel.columns, extra: [] };
        }
        const cols = rel.columns.map((c) => sql`CAST(${ident(c.id)} AS ${duckTypeSql(duckTypeOf(c))}) AS ${ident(c.id)}`);
        const rows = rel.rows.map((r, i) => sql`(${join([...r, sql`${int(i)}`], ', ')})`);
        const names = join([...rel.columns.map((c) => sql`${ident(c.id)}`), sql`${ident('__row')}`], ', ');
        // Rows keep their written order.
        const orderId = `o${this.options.orderIds.next++}`;
        const name = this.add(
          sql`SELECT ${join([...cols, sql`${ident('__row')} AS ${ident(orderId)}`], ', ')} FROM (VALUES ${join(rows, ', ')}) AS v(${names})`,
        );
        return {
          name,
          visible: rel.columns,
          extra: [],
          order: [{ id: orderId, duckType: 'BIGINT', descending: false, nullsFirst: false }],
        };
      }
      case 'select': {
        const cols = rel.outputs.map((o) => sql`${o.sql} AS ${ident(o.col.id)}`);
        return { name: this.add(sql`SELECT ${join(cols, ', ')}`), visible: rel.columns, extra: [] };
      }
      case 'range': {
        const c = rel.column;
        let body: Sql;
        if (c.type === 'real') {
          body = sql`SELECT CAST(${rel.from} + i * ${rel.step} AS DOUBLE) AS ${ident(c.id)} FROM generate_series(0, CAST(floor((${rel.to} - ${rel.from}) / ${rel.step}) AS BIGINT)) AS t(i)`;
        } else {
          body = sql`SELECT g AS ${ident(c.id)} FROM generate_series(${rel.from}, ${rel.to}, ${rel.step}) AS t(g)`;
        }
        const orderId = `o${this.options.orderIds.next++}`;
        // Rows keep the order the series generates them in.
        const name = this.add(sql`SELECT *, row_number() OVER () AS ${ident(orderId)} FROM (${body})`);
        return {
          name,
          visible: [c],
          extra: [],
          order: [{ id: orderId, duckType: 'BIGINT', descending: false, nullsFirst: false }],
        };
      }
      case 'filter': {
        // Order is carried as columns and applied where it matters (limit, the final select):
        // an ORDER BY here would sort for nothing and hide top-N from DuckDB's optimizer.
        const g = this.gen(rel.input);
        const name = this.add(sql`SELECT * FROM ${ident(g.name)} WHERE ${rel.predicate}`);
        return { ...g, name };
      }
      case 'project': {
        const g = this.gen(rel.input);
        // Order keys are hidden `o…` columns, never among the outputs: carry them through.
        // Row functions (row_number, prev …) read the current order.
        const order = g.order && g.order.length > 0 ? sql`${this.orderBy(g.order)}` : sql``;
        const cols = [
          ...rel.outputs.map((o) => sql`${substitute(o.sql, ROW_ORDER, order)} AS ${ident(o.col.id)}`),
          ...(g.order ?? []).map((o) => sql`${ident(o.id)}`),
        ];
        const name = this.add(sql`SELECT ${join(cols, ', ')} FROM ${ident(g.name)}`);
        return { name, visible: rel.columns, extra: [], ...(g.order ? { order: g.order } : {}) };
      }
      case 'partial-aggregate': {
        const g = this.gen(rel.input);
        // Datetime bins group by their microseconds, made TIMESTAMPs per group (epoch-bin-key.ts).
        const micros = rel.keys.map((k) => epochMicrosOf(k.sql));
        const keys = rel.keys.map((k, i) => sql`${micros[i] ?? k.sql} AS ${ident(k.col.id)}`);
        const partials = rel.aggregates.flatMap((a) => a.partials.map((p) => sql`${p.sql} AS ${ident(p.id)}`));
        const groupBy = rel.keys.length > 0 ? sql` GROUP BY ALL` : sql``;
        let name = this.add(sql`SELECT ${join([...keys, ...partials], ', ')} FROM ${ident(g.name)}${groupBy}`);
        if (micros.some((m) => m !== undefined)) {
          const cols = [
            ...rel.keys.map((k, i) =>
              micros[i] ? sql`make_timestamp(${ident(k.col.id)}) AS ${ident(k.col.id)}` : sql`${ident(k.col.id)}`,
            ),
            ...rel.aggregates.flatMap((a) => a.partials.map((p) => sql`${ident(p.id)}`)),
          ];
          name = this.add(sql`SELECT ${join(cols, ', ')} FROM ${ident(name)}`);
        }
        return {
          name,
          visible: rel.columns,
          extra: rel.aggregates.flatMap((a) => a.partials.map((p) => ({ id: p.id, duckType: p.type }))),
        };
      }
      case 'final-aggregate': {
        const g = this.gen(rel.input);
        const keys = rel.keys.map((k) => sql`${ident(k.id)}`);
        const finals = rel.aggregates.flatMap((a) => a.finals.map((f) => sql`${f.sql} AS ${ident(f.col.id)}`));
        const groupBy = rel.keys.length > 0 ? sql` GROUP BY ALL` : sql``;
        const name = this.add(sql`SELECT ${join([...keys, ...finals], ', ')} FROM ${ident(g.name)}${groupBy}`);
        return { name, visible: rel.columns, extra: [] };
      }
      case 'sort': {
        const g = this.gen(rel.input);
        const order: OrderKey[] = rel.keys.map((k) => ({
          id: `o${this.options.orderIds.next++}`,
          duckType: duckTypeOf(k),
          descending: k.descending,
          nullsFirst: k.nullsFirst,
        }));
        const cols = [
          ...g.visible.map((c) => sql`${ident(c.id)}`),
          ...g.extra.map((e) => sql`${ident(e.id)}`),
          ...rel.keys.map((k, i) => sql`${k.sql} AS ${ident((order[i] as OrderKey).id)}`),
        ];
        const name = this.add(sql`SELECT ${join(cols, ', ')} FROM ${ident(g.name)}`);
        return { name, visible: g.visible, extra: g.extra, order };
      }
      case 'limit': {
        const g = this.gen(rel.input);
        const name = this.add(sql`SELECT * FROM ${ident(g.name)}${this.orderBy(g.order)} LIMIT ${int(rel.count)}`);
        return { ...g, name };
      }
      case 'union': {
        const parts = rel.inputs.map((input) => {
          const g = this.gen(input.rel);
          const cols = rel.columns.map((c, i) => {
            const src = input.map[i];
            // A leg without the column fills nulls of its type (BIGINT for a ticks datetime).
            return src
              ? sql`${ident(src.id)} AS ${ident(c.id)}`
              : sql`CAST(NULL AS ${duckTypeSql(duckTypeOf(c))}) AS ${ident(c.id)}`;
          });
          return sql`SELECT ${join(cols, ', ')} FROM ${ident(g.name)}`;
        });
        return { name: this.add(join(parts, ' UNION ALL ')), visible: rel.columns, extra: [] };
      }
      case 'join':
        return this.join(rel);
      case 'mv-expand':
        return this.mvExpand(rel);
    }
  }

  /** mv-expand: the lists, then one unnest per list and one for the index (expanded in parallel). */
  private mvExpand(rel: Extract<Rel, { kind: 'mv-expand' }>): Generated {
    const g = this.gen(rel.input);
    const listIds = rel.lists.map(() => `m${this.options.orderIds.next++}`);
    const withLists = this.add(
      sql`SELECT *, ${join(
        rel.lists.map((l, i) => sql`${l} AS ${ident(listIds[i] as string)}`),
        ', ',
      )} FROM ${ident(g.name)}`,
    );
    const indexId = `o${this.options.orderIds.next++}`;
    const lengths = listIds.map((id) => sql`len(${ident(id)})`);
    const longest = lengths.length === 1 ? (lengths[0] as Sql) : sql`greatest(${join(lengths, ', ')})`;
    const carried = [...g.visible.map((c) => sql`${ident(c.id)}`), ...(g.order ?? []).map((o) => sql`${ident(o.id)}`)];
    const unnested = this.add(
      sql`SELECT ${join(
        [
          ...carried,
          ...listIds.map((id) => sql`unnest(${ident(id)}) AS ${ident(`${id}e`)}`),
          sql`unnest(range(0, ${longest})) AS ${ident(indexId)}`,
        ],
        ', ',
      )} FROM ${ident(withLists)}`,
    );
    const cols = rel.outputs.map((o) => {
      let value: Sql;
      if ('pass' in o) value = sql`${ident(o.pass.id)}`;
      else if ('index' in o) value = sql`${ident(indexId)}`;
      else {
        const element = sql`${ident(`${listIds[o.element] as string}e`)}`;
        value = o.cast ? o.cast(element) : element;
      }
      return sql`${value} AS ${ident(o.col.id)}`;
    });
    // Rows keep the input's order (when it has one), elements theirs.
    const order = [...(g.order ?? []), { id: indexId, duckType: 'BIGINT', descending: false, nullsFirst: false }];
    const name = this.add(sql`SELECT ${join([...cols, ...order.map((o) => sql`${ident(o.id)}`)], ', ')} FROM ${ident(unnested)}`);
    return { name, visible: rel.columns, extra: [], ...(g.order ? { order } : {}) };
  }

  /** A join as one CTE (column ids are unique across the plan, so no qualification is needed). */
  private join(rel: Extract<Rel, { kind: 'join' }>): Generated {
    const l = this.gen(rel.left);
    const r = this.gen(rel.right);
    let left = l.name;
    if (rel.dedupeLeft) {
      const keys = join(
        rel.keys.map((k) => k.left),
        ', ',
      );
      const all = join(
        l.visible.map((c) => sql`${ident(c.id)}`),
        ', ',
      );
      left = this.add(sql`SELECT * FROM ${ident(l.name)} QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY ${all}) = 1`);
    }
    const on = join(
      rel.keys.map((k) => sql`${k.left} = ${k.right}`),
      ' AND ',
    );
    const cols = join(
      rel.outputs.map((o) => sql`${o.sql} AS ${ident(o.col.id)}`),
      ', ',
    );
    let body: Sql;
    if (rel.how === 'semi' || rel.how === 'anti') {
      const [from, other] = rel.from === 'right' ? [r.name, left] : [left, r.name];
      const how = rel.how === 'semi' ? sql`SEMI JOIN` : sql`ANTI JOIN`;
      body = sql`SELECT ${cols} FROM ${ident(from)} ${how} ${ident(other)} ON ${on}`;
    } else {
      const how = { inner: sql`INNER JOIN`, left: sql`LEFT JOIN`, right: sql`RIGHT JOIN`, full: sql`FULL JOIN` }[rel.how];
      body = sql`SELECT ${cols} FROM ${ident(left)} ${how} ${ident(r.name)} ON ${on}`;
    }
    return { name: this.add(body), visible: rel.columns, extra: [] };
  }

  /** The whole statement: the CTE chain, then a final select. */
  statement(g: Generated, select: Sql[]): Sql {
    const body = sql`SELECT ${join(select, ', ')} FROM ${ident(g.name)}${this.orderBy(g.order)}`;
    const used = new Set<string>();
    collectIdents(body, used);
    for (const c of this.ctes) if (c instanceof Sql) collectIdents(c, used);
    const ctes = this.ctes.map((c) => {
      if (c instanceof Sql) return c;
      // Then the term folds the statement reads (decision 0045): one more source column each.
      const folds = c.rel.columns.flatMap((col) => {
        const fold = termFoldScanColumn(col);
        return fold && used.has(fold.id) ? [fold] : [];
      });
      c.used = [...c.rel.columns.filter((col) => used.has(col.id)), ...folds];
      const cols = c.used.map((col) => sql`${scanColumnSql(col.origin ?? col.name, col.type)} AS ${ident(col.id)}`);
      const list = cols.length > 0 ? join(cols, ', ') : sql`NULL AS ${ident('__none')}`;
      return sql`${ident(c.name)} AS (SELECT ${list} FROM ${this.options.scanSource(c.rel.table)})`;
    });
    return ctes.length > 0 ? sql`WITH ${join(ctes, ', ')} ${body}` : body;
  }
}

/** Final result columns in forms the executor reads directly. */
export function readableColumn(c: Column): Sql {
  const v = sql`${ident(c.id)}`;
  switch (c.type) {
    case 'datetime':
      // A datetime carried as ticks is read as Kusto's text, the 7th digit included (decision 0036).
      return c.ticks ? sql`${ticksTextSql(v)} AS ${ident(c.id)}` : sql`epoch_us(${v}) AS ${ident(c.id)}`;
    case 'guid':
    case 'dynamic':
      return sql`CAST(${v} AS VARCHAR) AS ${ident(c.id)}`;
    default:
      return sql`${v} AS ${ident(c.id)}`;
  }
}

/** A fragment output column as it travels (guid and dynamic as text). */
export function wireColumn(id: string, duckType: string): Sql {
  const v = sql`${ident(id)}`;
  return duckType === 'UUID' || duckType === 'JSON' ? sql`CAST(${v} AS VARCHAR) AS ${ident(id)}` : sql`${v} AS ${ident(id)}`;
}
