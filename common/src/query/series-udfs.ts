/**
 * The series functions (series-math.ts) as DuckDB scalar functions, registered with the engine's
 * other JS functions (kusto-udfs.ts) on every worker's instance and on the gateway's merge
 * database. Dynamic arguments travel as JSON text (VARCHAR); the engine's bindings cast results
 * back to JSON. Functions see NULL arguments (special handling): a null placeholder or constant
 * has a meaning of its own in the fill functions. A SeriesRefusal becomes the query's error.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBScalarFunction,
  type DuckDBScalarFunctionInfo,
  type DuckDBType,
  type DuckDBVector,
  VARCHAR,
} from '@duckdb/node-api';
import { placeOnAxis } from './series-json.js';
import {
  type ElementwiseOp,
  type FillKind,
  SeriesRefusal,
  seriesElementwise,
  seriesFill,
  seriesFir,
  seriesFitLine,
  seriesIir,
  seriesPair,
  seriesReduce,
  seriesStats,
  seriesUnary,
  type UnaryOp,
} from './series-math.js';

type Arg = string | number | bigint | boolean | null;

function rowFunction(
  name: string,
  parameterTypes: DuckDBType[],
  returnType: DuckDBType,
  f: (...args: Arg[]) => string | number | null,
): () => DuckDBScalarFunction {
  return () =>
    DuckDBScalarFunction.create({
      name,
      returnType,
      parameterTypes,
      specialHandling: true,
      mainFunction: (info: DuckDBScalarFunctionInfo, input, output: DuckDBVector) => {
        const columns = parameterTypes.map((_, i) => input.getColumnVector(i));
        try {
          for (let row = 0; row < input.rowCount; row++) {
            const args = columns.map((c) => (c.getItem(row) ?? null) as Arg);
            output.setItem(row, f(...args));
          }
          output.flush();
        } catch (err) {
          if (!(err instanceof SeriesRefusal)) throw err;
          info.setError(err.message);
        }
      },
    });
}

const text = (a: Arg): string | null => (typeof a === 'string' ? a : null);

/** Every series function, by SQL name; the gateway's registry (series-functions.ts) binds to these. */
export const SERIES_FUNCTIONS: readonly (() => DuckDBScalarFunction)[] = [
  rowFunction('kql_series_elementwise', [VARCHAR, VARCHAR, VARCHAR], VARCHAR, (op, a, b) =>
    seriesElementwise(op as ElementwiseOp, text(a), text(b)),
  ),
  rowFunction('kql_series_unary', [VARCHAR, VARCHAR], VARCHAR, (op, a) => seriesUnary(op as UnaryOp, text(a))),
  rowFunction('kql_series_reduce', [VARCHAR, VARCHAR], DOUBLE, (op, a) => seriesReduce(op as 'sum' | 'magnitude', text(a))),
  rowFunction('kql_series_pair', [VARCHAR, VARCHAR, VARCHAR], DOUBLE, (op, a, b) =>
    seriesPair(op as 'dot_product' | 'cosine_similarity' | 'pearson_correlation', text(a), text(b)),
  ),
  rowFunction('kql_series_fill', [VARCHAR, VARCHAR, VARCHAR, VARCHAR, BOOLEAN], VARCHAR, (kind, s, p, c, edges) =>
    seriesFill(kind as FillKind, text(s), text(p), text(c), edges !== false),
  ),
  rowFunction('kql_series_fir', [VARCHAR, VARCHAR, BOOLEAN, BOOLEAN], VARCHAR, (s, f, normalize, center) =>
    seriesFir(text(s), text(f), typeof normalize === 'boolean' ? normalize : null, center === true),
  ),
  rowFunction('kql_series_iir', [VARCHAR, VARCHAR, VARCHAR], VARCHAR, (s, b, a) => seriesIir(text(s), text(b), text(a))),
  rowFunction('kql_series_stats', [VARCHAR, BOOLEAN], VARCHAR, (s, ignore) => seriesStats(text(s), ignore === true)),
  rowFunction('kql_series_fit_line', [VARCHAR], VARCHAR, (s) => seriesFitLine(text(s))),
  // make-series: a group's values placed on the axis (semantic/make-series.ts in the gateway).
  rowFunction('kql_series_place', [VARCHAR, VARCHAR, BIGINT, VARCHAR], VARCHAR, (offsets, values, length, dflt) =>
    placeOnAxis(text(offsets) ?? '[]', text(values) ?? '[]', Number(length ?? 0), text(dflt)),
  ),
];
