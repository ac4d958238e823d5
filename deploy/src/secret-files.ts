import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads a secret from `file`, creating it once with `generate()` when absent. The file is written
 * with mode 0600 and never overwritten, so a restart keeps the same value.
 */
export function ensureSecretFile(file: string, generate: () => string): { value: string; created: boolean } {
  try {
    return { value: readFileSync(file, 'utf8').trim(), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = generate();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

/** A random secret of `bytes` bytes, URL-safe base64. */
export const randomSecret = (bytes: number) => randomBytes(bytes).toString('base64url');
