import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { configSchema, crossFieldProblems, type StrataConfig } from './schema.js';

/** Thrown when the configuration is unusable; `problems` lists every one, each with its key path. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The configuration after validation, with derived paths made absolute. */
export type ResolvedConfig = StrataConfig & {
  database: StrataConfig['database'] & { dataPath: string };
  backend: StrataConfig['backend'] & { dataPath: string };
  internalTls: StrataConfig['internalTls'] & { generateDir: string };
};

const ENV_PREFIX = 'STRATA_';
/** STRATA_* variables that are not config keys (the last: a test fault point, worker/src/ingest/test-fault-points.ts). */
const NON_CONFIG_ENV = new Set(['STRATA_CONFIG', 'STRATA_LOG_LEVEL', 'STRATA_TEST_FAULT_KILL_AFTER_COMMIT']);

type AnySchema = z.ZodType & { unwrap?: () => AnySchema; shape?: Record<string, AnySchema>; element?: AnySchema; in?: AnySchema };

/** Strips optional/default/prefault/pipe wrappers to reach the schema that says what a key holds. */
function core(schema: AnySchema): AnySchema {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const def = (s as unknown as { _zod: { def: { type: string; innerType?: AnySchema; in?: AnySchema } } })._zod.def;
    if (def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else break;
  }
  return s;
}

function kindOf(schema: AnySchema): string {
  return (core(schema) as unknown as { _zod: { def: { type: string } } })._zod.def.type;
}

/**
 * Applies STRATA_<PATH> variables: path segments separated by `_`, matched case-insensitively
 * against the schema's keys (STRATA_GATEWAY_PORT → gateway.port). Values are converted to the
 * key's type; arrays take comma-separated values.
 */
function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): void {
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || NON_CONFIG_ENV.has(name) || value === undefined) continue;
    const segments = name.slice(ENV_PREFIX.length).split('_').filter(Boolean);
    let schema: AnySchema = configSchema as unknown as AnySchema;
    let target: Record<string, unknown> = raw;
    const keyPath: string[] = [];
    let ok = true;
    for (let i = 0; i < segments.length; i++) {
      const shape = (core(schema) as AnySchema).shape;
      const key = shape && Object.keys(shape).find((k) => k.toLowerCase() === segments[i]!.toLowerCase());
      if (!shape || !key) {
        problems.push(`${name}: no configuration key ${[...keyPath, segments[i]].join('.')}`);
        ok = false;
        break;
      }
      keyPath.push(key);
      schema = shape[key]!;
      if (i < segments.length - 1) {
        if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
        target = target[key] as Record<string, unknown>;
      } else {
        target[key] = convertEnvValue(value, schema);
      }
    }
    if (ok && kindOf(schema) === 'object') problems.push(`${name}: ${keyPath.join('.')} is a section, not a value`);
  }
}

function convertEnvValue(value: string, schema: AnySchema): unknown {
  switch (kindOf(schema)) {
    case 'number':
      return value.trim() === '' ? value : Number(value);
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'array':
      if (value.trim().startsWith('[')) {
        try {
          return JSON.parse(value);
        } catch {
          return value;
        }
      }
      return value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return value;
  }
}

function formatIssuePath(p: PropertyKey[]): string {
  return p.length === 0
    ? '(root)'
    : p
        .map((s) => (typeof s === 'number' ? `[${s}]` : String(s)))
        .join('.')
        .replace(/\.\[/g, '[');
}

/** Validates raw config values (already merged with the environment). */
function validateConfig(raw: unknown, problems: string[] = []): ResolvedConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    // Zod skips refinements when fields fail; run the cross-field rules on the raw input instead.
    const refinementsRan = result.error.issues.some((i) => i.code === 'custom');
    if (!refinementsRan) for (const p of crossFieldProblems(raw)) problems.push(`${formatIssuePath(p.path)}: ${p.message}`);
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) problems.push(`${formatIssuePath([...issue.path, key])}: unknown key`);
      } else {
        problems.push(`${formatIssuePath(issue.path)}: ${issue.message}`);
      }
    }
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  const cfg = result.data;
  const dataRoot = path.resolve(cfg.dataRoot);
  return {
    ...cfg,
    dataRoot,
    database: { ...cfg.database, dataPath: path.resolve(cfg.database.dataPath ?? path.join(dataRoot, 'database')) },
    backend: { ...cfg.backend, dataPath: path.resolve(cfg.backend.dataPath ?? path.join(dataRoot, 'backend')) },
    internalTls: {
      ...cfg.internalTls,
      generateDir: path.resolve(cfg.internalTls.generateDir ?? path.join(dataRoot, 'secrets', 'internal-tls')),
    },
  };
}

/** Reads a YAML or JSON file (YAML is a superset of JSON), applies the environment, validates. */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot read: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML or JSON: ${(err as Error).message}`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError([`${file}: must hold an object`]);
  return loadConfigObject(raw as Record<string, unknown>, env);
}

export function loadConfigObject(raw: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const problems: string[] = [];
  const copy = structuredClone(raw);
  applyEnvOverrides(copy, env, problems);
  return validateConfig(copy, problems);
}
