/**
 * Confines a DuckDB instance to the files it owns, whatever SQL later runs on it: no file access
 * outside `allowedDirectories` (reads and writes: read_text('/etc/…'), COPY … TO elsewhere,
 * ATTACH of another file, INSTALL/LOAD of extensions), and the configuration locked, so no
 * statement can turn file access back on or change limits. Only `allowedConfigs` stay settable
 * (the worker changes `threads` live from the executor settings).
 *
 * This is the layer under the fragment check (fragment-check.ts): a gap in the check still
 * cannot read or write outside these directories. Run it once per instance, after every setting
 * and extension the instance needs (the configuration cannot change afterwards), on any of the
 * instance's connections: the settings are global. See docs/decisions/0008-fragment-safety.md.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

export interface DuckDBConfinement {
  /** Absolute directories the instance may read and write (its database file is always allowed). */
  allowedDirectories: readonly string[];
  /** Settings that stay changeable after the lock. */
  allowedConfigs?: readonly string[];
}

function stringList(values: readonly string[]): string {
  return `[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ')}]`;
}

export async function confineDuckDB(connection: DuckDBConnection, confinement: DuckDBConfinement): Promise<void> {
  // DuckDB matches allowed directories by prefix: each ends with a separator, so '/data/seg'
  // does not also allow '/data/segments-old'.
  const dirs = confinement.allowedDirectories.map((d) => (d.endsWith('/') ? d : `${d}/`));
  await connection.run(`SET allowed_directories = ${stringList(dirs)}`);
  if (confinement.allowedConfigs?.length) await connection.run(`SET allowed_configs = ${stringList(confinement.allowedConfigs)}`);
  // Extensions the binary has built in are loaded by the caller beforehand; no others are fetched.
  await connection.run('SET autoinstall_known_extensions = false');
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
}
