/**
 * Binds a parsed query to the caller's schema catalog and produces the relational form (`Rel`):
 * one node per pipeline step, so the order of steps is kept, with every expression already SQL.
 * Result column names and types follow Kusto (see naming.ts); the row cap is applied as a final
 * limit of cap + 1 rows so that truncation can be reported.
 */
import { queryError, type Span } from '../errors.js';
import { int, join, type Sql, sql, str, ts } from '../sql/sql.js';
import type { Expr, NamedExpr, Operator, QueryAst, Source, TabularExpr } from '../syntax/ast.js';
import type { CatalogTable, KqlType, SchemaCatalog } from '../types.js';
import { AGGREGATES, AggregateCollector, MULTI_COLUMN_AGGREGATES } from './aggregates.js';
import { type Bound, coerce, convert, literalSql, nullOf, strSql } from './bound.js';
import { BUILTIN_TABLES } from './builtin-tables.js';
import { ExprBinder, escapeRegex, identOf } from './expr-binder.js';
import { expressionName, NameAllocator } from './naming.js';
import { type Column, IdAllocator, type Output, type Rel, relColumns, type SortSpec, type TimeBounds } from './rel.js';

export interface BindOptions {
  /** The query's `now()`, µs since the Unix epoch. */
  nowUs: bigint;
  /** The column whose filters prune segments by time. */
  timeColumn: string;
  /**
   * Rows every table read is limited to, before any step of the query sees them: timeColumn in
   * [fromUs, toUs). Alert rules evaluate their query over their lookback window this way.
   */
  window?: { fromUs: bigint; toUs: bigint };
}

export interface BoundQuery {
  rel: Rel;
  columns: Column[];
}

type TabularLet = { kind: 'tabular'; tabular: TabularExpr };

/** Most table sources (scans, datatables, ranges …) one query may read. */
const MAX_SOURCES = 64;

export class QueryBinder {
  private readonly ids = new IdAllocator();
  private readonly scalarLets = new Map<string, Bound>();
  private readonly tabularLets = new Map<string, TabularLet>();
  private letDepth = 0;
  /** Relations read so far: each let use binds again, so repeated lets could multiply them. */
  private sources = 0;

  constructor(
    private readonly catalog: SchemaCatalog,
    private readonly options: BindOptions,
  ) {}

  bindQuery(ast: QueryAst): BoundQuery {
    for (const let_ of ast.lets) {
      const v = let_.value;
      if (v.kind === 'tabular' || (v.kind === 'name' && this.isTableName(v.tabular))) {
        this.scalarLets.delete(let_.name);
        this.tabularLets.set(let_.name, { kind: 'tabular', tabular: v.kind === 'tabular' ? v.tabular : v.tabular });
      } else {
        const expr = v.kind === 'scalar' ? v.expr : v.expr;
        const bound = this.exprBinder([]).bind(expr);
        this.tabularLets.delete(let_.name);
        this.scalarLets.set(let_.name, bound);
      }
    }
    const rel = this.tabular(ast.body);
    return { rel, columns: relColumns(rel) };
  }

  private isTableName(t: TabularExpr): boolean {
    if (t.operators.length > 0 || t.source.kind !== 'table') return false;
    const name = t.source.name;
    return this.tabularLets.has(name) || Object.hasOwn(BUILTIN_TABLES, name) || this.findTable(name) !== undefined;
  }

  private findTable(name: string): CatalogTable | undefined {
    return this.catalog.tables.find((t) => t.name === name);
  }

  private exprBinder(columns: Column[], inline?: Map<string, Bound>): ExprBinder {
    const map = new Map<string, Column>();
    for (const c of columns) map.set(c.name, c);
    const binder = new ExprBinder({ columns: map, lets: this.scalarLets, nowUs: this.options.nowUs });
    if (inline && inline.size > 0) return new InliningBinder(binder.ctx, inline);
    return binder;
  }

  // ------------------------------------------------------------------ tabular expressions

  tabular(t: TabularExpr): Rel {
    let rel = this.source(t.source);
    for (const op of t.operators) rel = this.operator(rel, op);
    return rel;
  }

  private source(src: Source): Rel {
    if (++this.sources > MAX_SOURCES) throw queryError(`The query reads more than ${MAX_SOURCES} tables.`, src.span);
    switch (src.kind) {
      case 'table':
        return this.tableSource(src.name, src.span);
      case 'nested':
        return this.tabular(src.tabular);
      case 'datatable':
        return this.datatable(src);
      case 'range':
        return this.range(src);
      case 'print':
        return this.print(src);
      case 'union':
        return this.union(src.tables.map((t) => this.tabular(t)));
    }
  }

  private tableSource(name: string, span: Span): Rel {
    const let_ = this.tabularLets.get(name);
    if (let_) {
      if (++this.letDepth > 32) throw queryError('Tabular let statements refer to each other too deeply.', span);
      try {
        return this.tabular(let_.tabular);
      } finally {
        this.letDepth--;
      }
    }
    if (this.scalarLets.has(name)) throw queryError(`'${name}' is a scalar value, not a table.`, span);
    const builtin = Object.hasOwn(BUILTIN_TABLES, name) ? BUILTIN_TABLES[name] : undefined;
    if (builtin) {
      const table = builtin(this.catalog);
      const columns = table.columns.map((c) => this.newColumn(c.name, c.type));
      const rows = table.rows.map((r) => r.map((v) => sql`${str(v)}`));
      return { kind: 'values', columns, rows };
    }
    const table = this.findTable(name);
    if (!table) throw queryError(`The name '${name}' does not refer to any known table, tabular variable or function.`, span);
    const scan: Rel = {
      kind: 'scan',
      table: table.name,
      columns: table.columns.map((c) => ({ ...this.newColumn(c.name, c.type), origin: c.name })),
    };
    const window = this.options.window;
    const time = window && scan.columns.find((c) => c.origin === this.options.timeColumn);
    if (!window || !time) return scan;
    const t = identOf(time);
    return {
      kind: 'filter',
      input: scan,
      predicate: sql`(${t} >= ${ts(window.fromUs)} AND ${t} < ${ts(window.toUs)})`,
      columns: scan.columns,
      time: { fromUs: window.fromUs, toUs: window.toUs },
    };
  }

  private newColumn(name: string, type: KqlType): Column {
    return { name, type, id: this.ids.column() };
  }

  private datatable(src: Extract<Source, { kind: 'datatable' }>): Rel {
    const names = new NameAllocator();
    const columns = src.columns.map((c) => {
      if (!names.claim(c.name)) throw queryError(`A column with the name '${c.name}' is already declared.`, c.span);
      return this.newColumn(c.name, c.type);
    });
    const binder = this.exprBinder([]);
    const rows: Sql[][] = [];
    for (let i = 0; i < src.values.length; i += columns.length) {
      rows.push(
        columns.map((col, j) => {
          const b = binder.bind(src.values[i + j] as Expr);
          return this.valueOfType(b, col.type, 'datatable');
        }),
      );
    }
    return { kind: 'values', columns, rows };
  }

  /** A value stored into a column of a declared type (datatable, parse). */
  private valueOfType(b: Bound, type: KqlType, what: string): Sql {
    if (b.type === type) return b.sql;
    if (b.value !== undefined && b.value.value === null) return nullOf(type);
    if (b.type === 'long' && type === 'real') return coerce(b, 'real');
    if (type === 'dynamic') return convert(b, 'dynamic', what).sql;
    throw queryError(`${what}: a ${b.type} value cannot go into a ${type} column.`, b.span);
  }

  private range(src: Extract<Source, { kind: 'range' }>): Rel {
    const binder = this.exprBinder([]);
    const from = binder.bind(src.from);
    const to = binder.bind(src.to);
    const step = binder.bind(src.step);
    let type: KqlType = from.type;
    if (from.type === 'long' && to.type === 'long' && step.type === 'real') type = 'real';
    if ((from.type === 'real' || to.type === 'real') && from.type !== 'datetime') type = 'real';
    const column = this.newColumn(src.column, type);
    if (type === 'datetime') {
      if (to.type !== 'datetime' || step.type !== 'timespan')
        throw queryError('A datetime range needs datetime bounds and a timespan step.', src.span);
      return { kind: 'range', column, from: from.sql, to: to.sql, step: sql`to_microseconds(${step.sql} // 10)` };
    }
    if (type === 'timespan') {
      if (to.type !== 'timespan' || step.type !== 'timespan')
        throw queryError('A timespan range needs timespan bounds and step.', src.span);
      return { kind: 'range', column, from: from.sql, to: to.sql, step: step.sql };
    }
    if (type !== 'long' && type !== 'real') throw queryError(`A range over ${type} values is not supported.`, src.span);
    for (const b of [to, step]) {
      if (b.type !== 'long' && b.type !== 'real')
        throw queryError(`The range bounds and step must be numbers; this is a ${b.type}.`, b.span);
    }
    return { kind: 'range', column, from: coerce(from, type), to: coerce(to, type), step: coerce(step, type) };
  }

  private print(src: Extract<Source, { kind: 'print' }>): Rel {
    const names = new NameAllocator();
    const binder = this.exprBinder([]);
    const outputs: Output[] = src.items.map((item, i) => {
      const b = binder.bind(item.expr);
      const name = item.name ?? `print_${i}`;
      if (!names.claim(name))
        throw queryError(`A column with the name '${name}' is already declared.`, item.nameSpan ?? item.span);
      return { col: this.newColumn(name, b.type), sql: b.sql };
    });
    return { kind: 'select', columns: outputs.map((o) => o.col), outputs };
  }

  private union(inputs: Rel[]): Rel {
    // Columns by name in order of first appearance; a name with different types in different
    // inputs becomes one column per type (name_long, name_string), as Kusto does.
    const typesByName = new Map<string, Set<KqlType>>();
    for (const rel of inputs) {
      for (const c of relColumns(rel)) {
        if (!typesByName.has(c.name)) typesByName.set(c.name, new Set());
        typesByName.get(c.name)?.add(c.type);
      }
    }
    const columns: Column[] = [];
    const key = (name: string, type: KqlType) => `${name}\u0000${type}`;
    const byKey = new Map<string, Column>();
    for (const rel of inputs) {
      for (const c of relColumns(rel)) {
        const k = key(c.name, c.type);
        if (byKey.has(k)) continue;
        const name = (typesByName.get(c.name)?.size ?? 1) > 1 ? `${c.name}_${c.type}` : c.name;
        const col = this.newColumn(name, c.type);
        byKey.set(k, col);
        columns.push(col);
      }
    }
    return {
      kind: 'union',
      columns,
      inputs: inputs.map((rel) => {
        const own = new Map(relColumns(rel).map((c) => [key(c.name, c.type), c] as const));
        return { rel, map: columns.map((_, i) => own.get([...byKey.keys()][i] as string) ?? null) };
      }),
    };
  }

  // ------------------------------------------------------------------ operators

  private operator(input: Rel, op: Operator): Rel {
    const columns = relColumns(input);
    switch (op.kind) {
      case 'where': {
        const b = this.exprBinder(columns).bind(op.predicate, true);
        const pred = b.type === 'bool' ? b : b.type === 'dynamic' ? convert(b, 'bool', 'where') : undefined;
        if (!pred) throw queryError(`A where clause needs a boolean condition; this is a ${b.type}.`, op.predicate.span);
        const time = this.timeBounds(op.predicate, columns);
        return { kind: 'filter', input, predicate: pred.sql, columns, ...(time ? { time } : {}) };
      }
      case 'project':
        return this.project(input, columns, op.items);
      case 'extend':
        return this.extend(input, columns, op.items);
      case 'project-away': {
        const away = new Set<string>();
        for (const n of op.names) {
          if (!columns.some((c) => c.name === n.name)) throw queryError(`The column '${n.name}' does not exist.`, n.span);
          away.add(n.name);
        }
        const kept = columns.filter((c) => !away.has(c.name));
        return { kind: 'project', input, outputs: kept.map((c) => ({ col: c, sql: identOf(c) })), columns: kept };
      }
      case 'project-rename': {
        const renamed = new Map<string, string>();
        for (const item of op.items) {
          if (!columns.some((c) => c.name === item.from))
            throw queryError(`The column '${item.from}' does not exist.`, item.fromSpan);
          renamed.set(item.from, item.name);
        }
        const names = new NameAllocator();
        const out: Column[] = columns.map((c) => {
          const name = renamed.get(c.name) ?? c.name;
          if (!names.claim(name)) throw queryError(`A column with the name '${name}' is already declared.`, op.span);
          return { ...c, name };
        });
        return { kind: 'project', input, outputs: out.map((c) => ({ col: c, sql: identOf(c) })), columns: out };
      }
      case 'summarize':
        return this.summarize(input, columns, op.aggregates, op.by, op.span);
      case 'count':
        return this.summarize(
          input,
          columns,
          [{ name: 'Count', expr: { kind: 'call', name: 'count', nameSpan: op.span, args: [], span: op.span }, span: op.span }],
          [],
          op.span,
        );
      case 'distinct': {
        const items: NamedExpr[] =
          op.items.length === 1 && op.items[0]?.expr.kind === 'star'
            ? columns.map((c) => ({ expr: { kind: 'name', name: c.name, span: op.span }, span: op.span }))
            : op.items;
        if (items.length === 0) throw queryError('distinct needs at least one column.', op.span);
        return this.summarize(input, columns, [], items, op.span);
      }
      case 'take':
        return { kind: 'limit', input, count: this.constCount(op.count, 'take'), columns };
      case 'sort': {
        const sorted = this.sort(
          input,
          columns,
          op.keys.map((k) => ({ ...k })),
        );
        return sorted;
      }
      case 'top': {
        const count = this.constCount(op.count, 'top');
        const sorted = this.sort(input, columns, [op.key]);
        return { kind: 'limit', input: sorted, count, columns };
      }
      case 'union':
        return this.union([input, ...op.tables.map((t) => this.tabular(t))]);
      case 'parse':
        return this.parse(input, columns, op);
    }
  }

  private constCount(expr: Expr, what: string): bigint {
    const b = this.exprBinder([]).bind(expr);
    if (b.value?.type !== 'long' || b.value.value === null || b.value.value < 0n) {
      throw queryError(`The row count of '${what}' must be a non-negative constant integer.`, expr.span);
    }
    return b.value.value;
  }

  private sort(input: Rel, columns: Column[], keys: { expr: Expr; descending?: boolean; nullsFirst?: boolean }[]): Rel {
    const binder = this.exprBinder(columns);
    const specs: SortSpec[] = keys.map((k) => {
      const b = binder.bind(k.expr);
      if (b.type === 'dynamic') throw queryError('Sorting by a dynamic value is not supported; convert it first.', k.expr.span);
      // Kusto: descending unless asc is written; nulls last when descending, first when ascending.
      const descending = k.descending ?? true;
      const nullsFirst = k.nullsFirst ?? !descending;
      return { sql: b.type === 'string' ? strSql(b) : b.sql, type: b.type, descending, nullsFirst };
    });
    return { kind: 'sort', input, keys: specs, columns };
  }

  /** project: a new column list; items may refer to columns defined earlier in the same project. */
  private project(input: Rel, columns: Column[], items: NamedExpr[]): Rel {
    const names = new NameAllocator();
    const inline = new Map<string, Bound>();
    const outputs: Output[] = [];
    const pending: { item: NamedExpr; b: Bound }[] = [];
    for (const item of items) {
      if (item.expr.kind === 'star') throw queryError("'project *' is not supported; list the columns.", item.span);
      const b = this.exprBinder(columns, inline).bind(item.expr);
      pending.push({ item, b });
      if (item.name) {
        if (!names.claim(item.name))
          throw queryError(`A column with the name '${item.name}' is already declared.`, item.nameSpan ?? item.span);
      } else if (item.expr.kind === 'name') {
        if (!names.claim(item.expr.name))
          throw queryError(`A column with the name '${item.expr.name}' is already declared.`, item.span);
      }
      const name = item.name ?? (item.expr.kind === 'name' ? item.expr.name : undefined);
      if (name) inline.set(name, b);
    }
    for (const { item, b } of pending) {
      let name = item.name ?? (item.expr.kind === 'name' ? item.expr.name : undefined);
      if (!name) {
        const derived = expressionName(item.expr);
        name = derived !== undefined ? names.derive(derived) : names.column();
      }
      const col: Column = { name, type: b.type, id: this.ids.column() };
      if (b.column?.origin) col.origin = b.column.origin;
      outputs.push({ col, sql: b.sql });
    }
    return { kind: 'project', input, outputs, columns: outputs.map((o) => o.col) };
  }

  /** extend: existing columns stay; a new column with an existing name replaces it in place. */
  private extend(input: Rel, columns: Column[], items: NamedExpr[]): Rel {
    const outputs: Output[] = columns.map((c) => ({ col: c, sql: identOf(c) }));
    const names = new NameAllocator(columns.map((c) => c.name));
    const declared = new Set<string>();
    const inline = new Map<string, Bound>();
    for (const item of items) {
      if (item.expr.kind === 'star') throw queryError("'*' is not allowed in extend.", item.span);
      const b = this.exprBinder(columns, inline).bind(item.expr);
      let name = item.name ?? expressionName(item.expr);
      if (name !== undefined && declared.has(name)) {
        if (item.name) throw queryError(`A column with the name '${name}' is already declared.`, item.nameSpan ?? item.span);
        name = names.derive(name);
      }
      if (name === undefined) name = names.column();
      names.claim(name);
      declared.add(name);
      inline.set(name, b);
      const col: Column = { name, type: b.type, id: this.ids.column() };
      if (b.column?.origin) col.origin = b.column.origin;
      const at = outputs.findIndex((o) => o.col.name === name);
      if (at >= 0) outputs[at] = { col, sql: b.sql };
      else outputs.push({ col, sql: b.sql });
    }
    return { kind: 'project', input, outputs, columns: outputs.map((o) => o.col) };
  }

  private summarize(input: Rel, columns: Column[], aggregates: NamedExpr[], by: NamedExpr[], span: Span): Rel {
    const rowBinder = this.exprBinder(columns);
    const names = new NameAllocator();
    const keyItems = [...by];
    const aggItems: NamedExpr[] = [];
    for (const item of aggregates) {
      // The product's `summarize machine`: a bare column without aggregate is a key.
      if (!item.name && item.expr.kind === 'name' && columns.some((c) => c.name === (item.expr as { name: string }).name))
        keyItems.push(item);
      else aggItems.push(item);
    }
    if (keyItems.length === 0 && aggItems.length === 0) throw queryError('summarize needs an aggregate or a by clause.', span);

    const keyOutputs: Output[] = [];
    for (const item of keyItems) {
      const b = rowBinder.bind(item.expr);
      let name = item.name ?? expressionName(item.expr);
      if (item.name || item.expr.kind === 'name') {
        if (!names.claim(name as string))
          throw queryError(`A column with the name '${name}' is already declared.`, item.nameSpan ?? item.span);
      } else {
        name = name !== undefined ? names.derive(name) : names.column();
      }
      const col: Column = { name: name as string, type: b.type, id: this.ids.column() };
      if (b.column?.origin) col.origin = b.column.origin;
      keyOutputs.push({ col, sql: b.type === 'string' ? strSql(b) : b.sql });
    }

    const collector = new AggregateCollector({
      ids: this.ids,
      scope: columns,
      keyNames: new Set(keyOutputs.map((k) => k.col.name)),
    });
    const aggBinder = new ExprBinder({ ...rowBinder.ctx, aggregates: collector });
    const itemValues: {
      name?: string;
      nameSpan?: Span;
      derived?: string;
      fixed?: boolean;
      value: Sql;
      type: KqlType;
      span: Span;
    }[] = [];
    for (const item of aggItems) {
      const e = item.expr;
      if (
        e.kind === 'call' &&
        Object.hasOwn(AGGREGATES, e.name.toLowerCase()) &&
        MULTI_COLUMN_AGGREGATES.has(e.name.toLowerCase())
      ) {
        const outs = collector.bindTopLevel(e, aggBinder);
        outs.forEach((o, i) => {
          const explicit = i === 0 ? item.name : undefined;
          itemValues.push({
            name: explicit,
            nameSpan: item.nameSpan,
            derived: o.name,
            fixed: o.fixedName,
            value: o.value,
            type: o.type,
            span: item.span,
          });
        });
        continue;
      }
      if (e.kind === 'call' && Object.hasOwn(AGGREGATES, e.name.toLowerCase())) {
        const [o] = collector.bindTopLevel(e, aggBinder);
        if (!o) continue;
        itemValues.push({
          name: item.name,
          nameSpan: item.nameSpan,
          derived: o.name,
          value: o.value,
          type: o.type,
          span: item.span,
        });
        continue;
      }
      const b = aggBinder.bind(e);
      itemValues.push({ name: item.name, nameSpan: item.nameSpan, value: b.sql, type: b.type, span: item.span });
    }
    const post: Output[] = keyOutputs.map((k) => ({ col: k.col, sql: identOf(k.col) }));
    for (const v of itemValues) {
      let name: string;
      if (v.name !== undefined) {
        if (!names.claim(v.name))
          throw queryError(`A column with the name '${v.name}' is already declared.`, v.nameSpan ?? v.span);
        name = v.name;
      } else if (v.derived !== undefined) {
        name = names.derive(v.derived);
      } else {
        name = names.column();
      }
      post.push({ col: { name, type: v.type, id: this.ids.column() }, sql: v.value });
    }

    const partialColumns: Column[] = keyOutputs.map((k) => k.col);
    const partialRel: Rel = {
      kind: 'partial-aggregate',
      input,
      keys: keyOutputs,
      aggregates: collector.parts,
      columns: partialColumns,
    };
    const finalCols = [...keyOutputs.map((k) => k.col), ...collector.parts.flatMap((p) => p.finals.map((f) => f.col))];
    const finalRel: Rel = {
      kind: 'final-aggregate',
      input: partialRel,
      keys: keyOutputs.map((k) => k.col),
      aggregates: collector.parts,
      columns: finalCols,
    };
    return { kind: 'project', input: finalRel, outputs: post, columns: post.map((o) => o.col) };
  }

  private parse(input: Rel, columns: Column[], op: Extract<Operator, { kind: 'parse' }>): Rel {
    const binder = this.exprBinder(columns);
    const source = convert(binder.bind(op.source), 'string', 'parse');
    let regex = '';
    const captures: { name: string; type: KqlType; group: number; span: Span }[] = [];
    op.parts.forEach((part, i) => {
      if (part.kind === 'text') {
        regex += `(?:${part.text})`;
      } else {
        const last = i === op.parts.length - 1;
        // The last column takes the rest of the text; others the shortest match.
        regex += last ? '(.*)' : '(.*?)';
        captures.push({ name: part.name, type: part.type ?? 'string', group: captures.length + 1, span: part.span });
      }
    });
    if (captures.length === 0) throw queryError('parse needs at least one column to extract.', op.span);
    void escapeRegex;
    const text = strSql(source);
    const outputs: Output[] = columns.map((c) => ({ col: c, sql: identOf(c) }));
    const seen = new Set<string>();
    for (const cap of captures) {
      if (seen.has(cap.name)) throw queryError(`A column with the name '${cap.name}' is already declared.`, cap.span);
      seen.add(cap.name);
      const raw: Bound = {
        type: 'string',
        sql: sql`(CASE WHEN regexp_matches(${text}, ${str(regex)}) THEN regexp_extract(${text}, ${str(regex)}, CAST(${int(cap.group)} AS INTEGER)) ELSE '' END)`,
        notNull: true,
        span: cap.span,
      };
      const value = cap.type === 'string' ? raw : convert(raw, cap.type, 'parse');
      const col: Column = { name: cap.name, type: cap.type, id: this.ids.column() };
      const at = outputs.findIndex((o) => o.col.name === cap.name);
      if (at >= 0) outputs[at] = { col, sql: value.sql };
      else outputs.push({ col, sql: value.sql });
    }
    return { kind: 'project', input, outputs, columns: outputs.map((o) => o.col) };
  }

  /**
   * Bounds on the time column implied by a where clause: conjuncts comparing the scan's time
   * column (possibly renamed) with constant datetimes. Conservative: bounds are inclusive.
   */
  private timeBounds(predicate: Expr, columns: Column[]): TimeBounds | undefined {
    const binder = this.exprBinder(columns);
    const isTime = (e: Expr) => e.kind === 'name' && columns.find((c) => c.name === e.name)?.origin === this.options.timeColumn;
    const constTime = (e: Expr): bigint | undefined => {
      try {
        const b = binder.bind(e);
        return b.value?.type === 'datetime' && b.value.value !== null ? b.value.value : undefined;
      } catch {
        return undefined;
      }
    };
    const bounds: TimeBounds = {};
    const lower = (v: bigint) => {
      if (bounds.fromUs === undefined || v > bounds.fromUs) bounds.fromUs = v;
    };
    const upper = (v: bigint) => {
      if (bounds.toUs === undefined || v < bounds.toUs) bounds.toUs = v;
    };
    const visit = (e: Expr) => {
      if (e.kind === 'binary' && e.op === 'and') {
        visit(e.left);
        visit(e.right);
        return;
      }
      if (e.kind === 'binary' && ['<', '<=', '>', '>=', '=='].includes(e.op)) {
        let op = e.op;
        let value: bigint | undefined;
        if (isTime(e.left)) value = constTime(e.right);
        else if (isTime(e.right)) {
          value = constTime(e.left);
          op = op === '<' ? '>' : op === '<=' ? '>=' : op === '>' ? '<' : op === '>=' ? '<=' : op;
        }
        if (value === undefined) return;
        if (op === '>' || op === '>=' || op === '==') lower(value);
        if (op === '<' || op === '<=' || op === '==') upper(value);
        return;
      }
      if (e.kind === 'between' && !e.negated && isTime(e.left)) {
        const lo = constTime(e.low);
        if (lo !== undefined) {
          lower(lo);
          const hiBound = binder.bind(e.high);
          if (hiBound.value?.type === 'datetime' && hiBound.value.value !== null) upper(hiBound.value.value);
          else if (hiBound.value?.type === 'timespan' && hiBound.value.value !== null) upper(lo + hiBound.value.value / 10n);
        }
      }
    };
    visit(predicate);
    return bounds.fromUs === undefined && bounds.toUs === undefined ? undefined : bounds;
  }
}

/** An expression binder that sees columns defined earlier in the same project/extend. */
class InliningBinder extends ExprBinder {
  constructor(
    ctx: ExprBinder['ctx'],
    private readonly inline: Map<string, Bound>,
  ) {
    super(ctx);
  }

  override bind(expr: Expr, predicate = false): Bound {
    if (expr.kind === 'name' && this.inline.has(expr.name)) return { ...(this.inline.get(expr.name) as Bound), span: expr.span };
    return super.bind(expr, predicate);
  }
}

export { join, literalSql };
