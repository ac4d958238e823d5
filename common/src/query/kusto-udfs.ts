/**
 * JS scalar functions the query engine calls where DuckDB has no exact equivalent (issue 17).
 * A function registered on one connection of a DuckDB instance is visible to all its connections
 * (it is a catalog entry), and results must not depend on where a function runs, so every
 * instance that runs engine SQL registers the same set once, when it opens, before its
 * configuration is locked: each worker's storage instance and the gateway's merge database.
 * (Registering per fragment connection, inside its snapshot transaction, is a catalog write that
 * conflicted with the other open snapshots.)
 * Names carry the `kql_` prefix so they cannot shadow a DuckDB function; none reads files,
 * settings or the environment.
 */
import { BIGINT, type DuckDBConnection, DuckDBScalarFunction, type DuckDBVector, VARCHAR } from '@duckdb/node-api';
import { xxh64 } from '@node-rs/xxhash';
import punycode from 'punycode/punycode.js';
import { SERIES_FUNCTIONS } from './series-udfs.js';

/** A VARCHAR → VARCHAR function; `f` returns null when the input does not convert. */
function textFunction(name: string, f: (s: string) => string | null): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name,
    returnType: VARCHAR,
    parameterTypes: [VARCHAR],
    mainFunction: (_info, input, output: DuckDBVector) => {
      const v = input.getColumnVector(0);
      for (let row = 0; row < input.rowCount; row++) {
        const s = v.getItem(row);
        output.setItem(row, typeof s === 'string' ? f(s) : null);
      }
      output.flush();
    },
  });
}

/** XXH64 (seed 0) of a string's UTF-8 bytes as a signed long, as Kusto's hash_xxhash64 returns it. */
function xxhash64Function(): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name: 'kql_xxhash64',
    returnType: BIGINT,
    parameterTypes: [VARCHAR],
    mainFunction: (_info, input, output: DuckDBVector) => {
      const v = input.getColumnVector(0);
      for (let row = 0; row < input.rowCount; row++) {
        const s = v.getItem(row);
        output.setItem(row, typeof s === 'string' ? BigInt.asIntN(64, xxh64(Buffer.from(s, 'utf8'))) : null);
      }
      output.flush();
    },
  });
}

/** Runs a conversion that throws on bad input (punycode's decoders) as one giving null. */
const orNull =
  (f: (s: string) => string) =>
  (s: string): string | null => {
    try {
      return f(s);
    } catch {
      return null;
    }
  };

/** The functions, by their SQL names. The engine's bindings (gateway registry) call these names. */
const FUNCTIONS: readonly (() => DuckDBScalarFunction)[] = [
  // RFC 3492 on one label; the domain forms apply IDNA's xn-- labels (punycode.toASCII/toUnicode).
  () => textFunction('kql_punycode_encode', orNull(punycode.encode)),
  () => textFunction('kql_punycode_decode', orNull(punycode.decode)),
  () => textFunction('kql_punycode_domain_encode', orNull(punycode.toASCII)),
  () => textFunction('kql_punycode_domain_decode', orNull(punycode.toUnicode)),
  xxhash64Function,
  // Kusto's series functions over make-series arrays (series-udfs.ts).
  ...SERIES_FUNCTIONS,
];

/** Registers the engine's JS functions for the whole instance of `connection` (call once, at open). */
export function registerKustoFunctions(connection: DuckDBConnection): void {
  for (const make of FUNCTIONS) connection.registerScalarFunction(make());
}
