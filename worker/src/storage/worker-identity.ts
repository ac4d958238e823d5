import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { publishFile } from './durable-file.js';

/** File in the data directory holding the worker's identity. */
export const WORKER_ID_FILE = 'worker-id';

/**
 * The worker's identity: a UUID written once into its data directory (made durable before use).
 * It stays with the data (restarts, a new endpoint) and is new when the directory is replaced, so
 * placements, which name it, tell a worker that lost its volume from the one that wrote them.
 */
export async function workerIdentity(dataPath: string): Promise<string> {
  const file = path.join(dataPath, WORKER_ID_FILE);
  try {
    const id = (await readFile(file, 'utf8')).trim();
    if (id) return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomUUID();
  await writeFile(`${file}.tmp`, `${id}\n`);
  await publishFile(`${file}.tmp`, file);
  return id;
}
