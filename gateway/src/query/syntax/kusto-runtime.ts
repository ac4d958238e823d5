/**
 * Loads Microsoft's KQL parser (`@kusto/language-service-next`, a Bridge.NET build of
 * Kusto.Language) once per process. It runs only after its Bridge runtime: import `bridge.min.js`,
 * then `Kusto.Language.Bridge.min.js`; both install globals. The first parse builds the grammar
 * (about a second), so `warmKustoParser()` is called at start-up, before the gateway listens.
 *
 * The bridge objects are typed here structurally, with only what the adapter reads.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** A node of the Kusto syntax tree, read by property name. */
export interface KNode {
  readonly Kind: number;
  readonly TextStart: number;
  readonly Width: number;
  readonly ChildCount: number;
  GetChild(index: number): KNode | null;
  readonly [property: string]: unknown;
}

/** `SyntaxList<T>` and other read-only lists of the bridge. */
export interface KList<T> {
  readonly Count: number;
  getItem(index: number): T;
}

export interface KDiagnostic {
  readonly Code: string;
  readonly Message: string;
  readonly Start: number;
  readonly Length: number;
  readonly Severity: string;
}

export interface KCode {
  readonly Syntax: KNode;
  GetDiagnostics(): KList<KDiagnostic>;
}

export interface KCompletionItem {
  readonly Kind: number;
  readonly DisplayText: string;
  readonly MatchText: string;
  readonly OrderText: string;
}

export interface KustoLanguage {
  KustoCode: {
    Parse(text: string): KCode;
    ParseAndAnalyze(text: string, globals: unknown): KCode;
  };
  GlobalState: { Default: { WithDatabase(db: unknown): unknown } };
  Symbols: {
    DatabaseSymbol: { $ctor1: new (name: string, members: unknown[]) => unknown };
    TableSymbol: { $ctor7: new (name: string, schema: string, description: string | null) => unknown };
  };
  Syntax: { SyntaxKind: Record<string, number> };
  Editor: {
    KustoCodeService: {
      ctor: new (
        code: KCode,
      ) => {
        GetCompletionItems(position: number): {
          Items: KList<KCompletionItem>;
          EditStart: number;
          EditLength: number;
        } | null;
      };
    };
    CompletionKind: Record<string, number>;
  };
}

let loaded: Promise<KustoLanguage> | undefined;
let language: KustoLanguage | undefined;

/** Loads the bridge runtime and the language library (once). */
function loadKustoLanguage(): Promise<KustoLanguage> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = require.resolve('@kusto/language-service-next/package.json').replace(/package\.json$/, '');
    await import(pathToFileURL(`${dir}bridge.min.js`).href);
    await import(pathToFileURL(`${dir}Kusto.Language.Bridge.min.js`).href);
    const root = (globalThis as unknown as { Kusto?: { Language?: KustoLanguage } }).Kusto;
    if (!root?.Language) throw new Error('Kusto.Language did not load');
    language = root.Language;
    return language;
  })();
  return loaded;
}

/** The loaded language; throws when `loadKustoLanguage()` has not completed. */
export function kustoLanguage(): KustoLanguage {
  if (!language) throw new Error('The KQL parser is not loaded: call warmKustoParser() at start-up.');
  return language;
}

let warmed: Promise<number> | undefined;

/**
 * Loads the parser and runs one parse, one analysis and one completion so that the grammar and
 * binder are built before the first request. Resolves to the milliseconds it took.
 */
export function warmKustoParser(): Promise<number> {
  warmed ??= (async () => {
    const started = performance.now();
    const K = await loadKustoLanguage();
    K.KustoCode.Parse('T | where a > 1 | summarize count() by bin(timestamp, 1h) | take 10');
    const db = new K.Symbols.DatabaseSymbol.$ctor1('db', [
      new K.Symbols.TableSymbol.$ctor7('T', '(a:long, timestamp:datetime)', null),
    ]);
    const code = K.KustoCode.ParseAndAnalyze('T | where a > 1 | ', K.GlobalState.Default.WithDatabase(db));
    new K.Editor.KustoCodeService.ctor(code).GetCompletionItems(18);
    return performance.now() - started;
  })();
  return warmed;
}
