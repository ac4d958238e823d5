/**
 * Result columns (`name:type`) of a query as Microsoft's analyzer (Kusto.Language) gives them, over
 * one table `T` with the given schema (`a:long, b:string`): what the engine's names and types are
 * checked against.
 */
import assert from 'node:assert/strict';
import { kustoLanguage } from '../../src/query/syntax/kusto-runtime.js';

const KUSTO_TYPE: Record<string, string> = {};

export function kustoColumns(query: string, columns: string): string[] {
  const K = kustoLanguage() as unknown as {
    KustoCode: {
      ParseAndAnalyze(
        q: string,
        g: unknown,
      ): {
        ResultType: { Columns: { Count: number; getItem(i: number): { Name: string; Type: { Name: string } } } };
        GetDiagnostics(): { Count: number; getItem(i: number): { Message: string } };
      };
    };
    GlobalState: { Default: { WithDatabase(db: unknown): unknown } };
    Symbols: {
      DatabaseSymbol: { $ctor1: new (n: string, m: unknown[]) => unknown };
      TableSymbol: { $ctor7: new (n: string, s: string, d: null) => unknown };
    };
  };
  const table = new K.Symbols.TableSymbol.$ctor7('T', `(${columns})`, null);
  const globals = K.GlobalState.Default.WithDatabase(new K.Symbols.DatabaseSymbol.$ctor1('db', [table]));
  const code = K.KustoCode.ParseAndAnalyze(query, globals);
  const diagnostics = code.GetDiagnostics();
  assert.equal(diagnostics.Count, 0, `the analyzer rejects ${query}: ${diagnostics.Count ? diagnostics.getItem(0).Message : ''}`);
  const cols = code.ResultType.Columns;
  const out: string[] = [];
  for (let i = 0; i < cols.Count; i++) {
    const c = cols.getItem(i);
    out.push(`${c.Name}:${KUSTO_TYPE[c.Type.Name] ?? c.Type.Name}`);
  }
  return out;
}
