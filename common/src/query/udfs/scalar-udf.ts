/**
 * One way to declare a JS scalar function for DuckDB: the SQL name, parameter and return types,
 * and a function of one row's values. The row loop, null handling and flushing live here once,
 * so each family module (ip-addresses.ts, geo-*.ts) holds only its semantics.
 */
import { DuckDBScalarFunction, type DuckDBType, type DuckDBVector, type DuckDBScalarFunction as Fn } from '@duckdb/node-api';

/** A row's argument values as DuckDB hands them over (string, number, bigint, boolean or null). */
export type UdfValue = string | number | bigint | boolean | null;

export interface UdfSpec {
  name: string;
  params: readonly DuckDBType[];
  returns: DuckDBType;
  /**
   * The result for one row; null gives SQL NULL. Called for every row, nulls included, because
   * Kusto's answer to a null argument is not always null (an empty string for the cell tokens).
   */
  row: (args: UdfValue[]) => UdfValue;
}

export function scalarUdf(spec: UdfSpec): Fn {
  return DuckDBScalarFunction.create({
    name: spec.name,
    returnType: spec.returns,
    parameterTypes: spec.params,
    // Nulls reach `row`: without special handling DuckDB would answer NULL before calling it.
    specialHandling: true,
    mainFunction: (_info, input, output: DuckDBVector) => {
      const columns = spec.params.map((_, i) => input.getColumnVector(i));
      const args: UdfValue[] = new Array(columns.length);
      for (let row = 0; row < input.rowCount; row++) {
        for (let i = 0; i < columns.length; i++) args[i] = (columns[i] as DuckDBVector).getItem(row) as UdfValue;
        output.setItem(row, spec.row(args) as never);
      }
      output.flush();
    },
  });
}

/** A number argument, or undefined when it is null or not finite. */
export function num(v: UdfValue): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** An integer argument (a BIGINT arrives as bigint), or undefined when null. */
export function int(v: UdfValue): number | undefined {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  return undefined;
}
