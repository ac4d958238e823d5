import { open, rename } from 'node:fs/promises';
import path from 'node:path';

/** Flushes a file's data to disk. */
async function fsyncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry list (after a rename into it) to disk. */
async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes a finished temporary file durable under its final name: fsync the data, rename, fsync the
 * directory. After this resolves the file survives a crash; before, at worst a temporary file is
 * left for start-up to delete.
 */
export async function publishFile(tmpFile: string, finalFile: string): Promise<void> {
  await fsyncFile(tmpFile);
  await rename(tmpFile, finalFile);
  await fsyncDirectory(path.dirname(finalFile));
}
