/**
 * A Bloom filter of term keys (term-hints.ts in common), the stored form of one segment column's
 * term index (term-index.ts). `mayHold` is false only for a key that was never added: no false
 * negatives, false positives at about 1 % with the sizes below.
 *
 * The layout is part of the stored data (the catalog's strata_term_index rows), so it is fixed
 * and versioned: bit i of the filter is bit (i % 8) of byte (i / 8); the k positions of a key are
 * (h1 + j·h2) mod m for j = 0…k-1 (double hashing), with h1 = xxh32(key, seed 0) and
 * h2 = xxh32(key, seed 1) | 1, keys hashed as UTF-8. Another layout needs another VERSION, and
 * rows of an unknown version are not used (the segment is scanned).
 *
 * Why not the npm `bloom-filters` package: it serialises to JSON objects and hashes with a pure
 * JS 64-bit xxhash (UINT64 objects per call); a stored filter here is one BLOB read on every
 * query, so a plain bit array over xxhash-wasm's 32-bit hash is what is wanted.
 */
import xxhash from 'xxhash-wasm';
import type { KeyHashSet } from './term-key-hashes.js';

export const TERM_FILTER_VERSION = 1;

/** Bits per key and hash functions: ~1 % false positives (k = bits · ln 2 ≈ 7). */
export const BITS_PER_KEY = 10;
const HASHES = 7;

/** The number of hash functions that gives the fewest false positives at `bitsPerKey` (bits · ln 2). */
const hashesFor = (bitsPerKey: number) => Math.max(1, Math.min(32, Math.round(bitsPerKey * Math.LN2)));

type Hasher = Awaited<ReturnType<typeof xxhash>>;
let hasherPromise: Promise<Hasher> | undefined;

/** The WASM hasher, instantiated once per process. */
export function termHasher(): Promise<Hasher> {
  hasherPromise ??= xxhash();
  return hasherPromise;
}

export class TermFilter {
  private constructor(
    readonly bits: Uint8Array,
    readonly hashes: number,
    private readonly hasher: Hasher,
  ) {}

  /** A filter sized for `keys` distinct keys, holding them. */
  static async of(keys: Iterable<string>, count: number): Promise<TermFilter> {
    const filter = TermFilter.sized(count, await termHasher());
    for (const k of keys) filter.add(k);
    return filter;
  }

  /**
   * The same filter as `of` the keys whose hash pairs these are (term-key-hashes.ts). A larger
   * `bitsPerKey` gives fewer false positives (block filters of a large segment, term-blocks.ts);
   * the stored form keeps the bits and the number of hashes, so any size reads back alike.
   */
  static async ofKeyHashes(keys: KeyHashSet, bitsPerKey = BITS_PER_KEY): Promise<TermFilter> {
    const filter = TermFilter.sized(keys.size, await termHasher(), bitsPerKey);
    keys.forEach((h1, h2) => {
      filter.addHashes(h1, h2);
    });
    return filter;
  }

  private static sized(count: number, hasher: Hasher, bitsPerKey = BITS_PER_KEY): TermFilter {
    const bytes = Math.max(8, Math.ceil((Math.max(1, count) * bitsPerKey) / 8));
    return new TermFilter(new Uint8Array(bytes), bitsPerKey === BITS_PER_KEY ? HASHES : hashesFor(bitsPerKey), hasher);
  }

  /** A stored filter (its bits are used as they are). */
  static async stored(bits: Uint8Array, hashes: number): Promise<TermFilter> {
    if (bits.length === 0 || !Number.isInteger(hashes) || hashes < 1 || hashes > 32)
      throw new Error('a stored term filter is malformed');
    return new TermFilter(bits, hashes, await termHasher());
  }

  add(key: string): void {
    this.addHashes(this.hasher.h32(key, 0), this.hasher.h32(key, 1));
  }

  /** Adds the key whose hashes are h1 = xxh32(key, 0) and h2 = xxh32(key, 1) (unsigned). */
  addHashes(h1: number, h2: number): void {
    const m = this.bits.length * 8;
    // (h1 + j·step) mod m as a running sum of residues: one float modulo per key instead of one
    // per position (a seal adds hundreds of thousands of keys).
    const step = ((h2 | 1) >>> 0) % m;
    let p = h1 % m;
    for (let j = 0; j < this.hashes; j++) {
      this.bits[p >>> 3]! |= 1 << (p & 7);
      p += step;
      if (p >= m) p -= m;
    }
  }

  /** False only if `key` was never added. */
  mayHold(key: string): boolean {
    return this.mayHoldHashes(this.hasher.h32(key, 0), this.hasher.h32(key, 1));
  }

  /**
   * mayHold for the key whose hashes are h1 = xxh32(key, 0) and h2 = xxh32(key, 1): a key looked
   * up in the many block filters of a large segment is hashed once, not once per filter.
   */
  mayHoldHashes(h1: number, h2: number): boolean {
    const m = this.bits.length * 8;
    const step = ((h2 | 1) >>> 0) % m;
    let p = h1 % m;
    for (let j = 0; j < this.hashes; j++) {
      if ((this.bits[p >>> 3]! & (1 << (p & 7))) === 0) return false;
      p += step;
      if (p >= m) p -= m;
    }
    return true;
  }
}
