/**
 * Collects the aggregates of one summarize while its items are bound: looks each call up in the
 * registry, runs its partial/merge definition, and names its result column by the declared rule.
 */
import { queryError } from '../errors.js';
import type { Expr } from '../syntax/ast.js';
import type { AggregateEnv, AggregateOutput } from './aggregates.js';
import type { Bound } from './bound.js';
import { columnMarks } from './column-marks.js';
import { refusedTicksUse, TICKS_AGGREGATES } from './datetime-ticks.js';
import type { AggregateSink, ExprBinder } from './expr-binder.js';
import { expressionName } from './naming.js';
import { aggregateFunction } from './registry/registry.js';
import type { AggregateEntry } from './registry/types.js';
import type { AggregatePart } from './rel.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

/** The default name of an aggregate's single result column (undefined: ColumnN). */
export function aggregateName(entry: AggregateEntry, call: CallExpr): string | undefined {
  const first = call.args[0];
  const arg = first ? expressionName(first) : undefined;
  switch (entry.naming.kind) {
    case 'prefix':
      return `${entry.naming.prefix}_${arg ?? ''}`;
    case 'first-argument':
      return arg;
    default:
      return undefined;
  }
}

/**
 * The row binder an aggregate binds its arguments with, refusing an argument that is a datetime
 * carried as ticks: the aggregates' partial states are typed TIMESTAMP (decision 0036), but for
 * TICKS_AGGREGATES, which answer one of their values and keep its ticks. Only the
 * argument itself is checked (the binder's own recursion goes past the proxy), so
 * `max(endofday(t) - t)`, a timespan, is allowed.
 */
function refusingTicks(binder: ExprBinder, what: string): ExprBinder {
  const bind = (expr: Expr, predicate?: boolean): Bound => {
    const b = binder.bind(expr, predicate);
    if (b.ticks) throw refusedTicksUse(what, b.span);
    return b;
  };
  return new Proxy(binder, { get: (target, key) => (key === 'bind' ? bind : Reflect.get(target, key)) });
}

export class AggregateCollector implements AggregateSink {
  readonly parts: AggregatePart[] = [];

  constructor(private readonly env: AggregateEnv) {}

  isAggregate(name: string): boolean {
    return aggregateFunction(name) !== undefined;
  }

  /** The registry entry of an aggregate call; the caller checked `isAggregate`. */
  entry(call: CallExpr): AggregateEntry {
    const entry = aggregateFunction(call.name);
    if (!entry) throw queryError(`'${call.name}' is not an aggregate.`, call.nameSpan);
    return entry;
  }

  /** A top-level aggregate call (may produce several columns). */
  bindTopLevel(call: CallExpr, binder: ExprBinder): AggregateOutput[] {
    const entry = this.entry(call);
    const row = binder.rowBinder();
    const bound = entry.run(call, TICKS_AGGREGATES.has(entry.name) ? row : refusingTicks(row, `'${call.name}'`), this.env);
    this.parts.push(bound.part);
    if (entry.naming.kind !== 'own') {
      const name = aggregateName(entry, call);
      const out = bound.outputs[0] as AggregateOutput;
      if (name === undefined) delete out.name;
      else out.name = name;
    }
    return bound.outputs;
  }

  bindAggregateCall(call: CallExpr, binder: ExprBinder): Bound {
    if (this.entry(call).multiColumn)
      throw queryError(`'${call.name}' returns several columns and cannot be part of an expression.`, call.span);
    const outputs = this.bindTopLevel(call, binder);
    const out = outputs[0] as AggregateOutput;
    return { type: out.type, sql: out.value, span: call.span, ...columnMarks(out) };
  }
}
