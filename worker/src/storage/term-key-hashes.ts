/**
 * The term keys of a segment column as the term index stores them (term-index.ts): each distinct
 * key once, as the pair of 32-bit hashes its Bloom filter positions come from (term-filter.ts),
 * cut and hashed straight from the texts' UTF-8 bytes.
 *
 * Why bytes and hash pairs rather than strings: building the index from JS strings (decode each
 * distinct value, slice each run, keep a Set of key strings, hash each key from a string) cost
 * ~3.8 µs per ingested row on the bench's rows, more than writing the rows (decision 0034). A
 * filter depends only on the set of (h1, h2) pairs of its keys, so a set of pairs builds the very
 * same filter; two different keys with the same 64 bits of hash would count once in the stored
 * key count (and size the filter by one key less), with no effect on what the filter answers.
 *
 * The key rule, on the bytes (the same as on the decoded text): every maximal run of ASCII
 * letters and digits, the Kelvin sign U+212A (UTF-8 E2 84 AA) and the long s U+017F (C5 BF), the
 * only non-ASCII characters RE2's (?i) matches with an ASCII letter, folded to lower case (K → k,
 * ſ → s). Every other byte ends a run: an ASCII byte that is not a letter or digit, or a byte of
 * any other non-ASCII character (lead bytes and continuation bytes are ≥ 0x80, and E2 and C5 are
 * lead bytes, never inside another character). Runs that are only part of an RE2 term (next to a
 * non-ASCII letter) give extra keys: false positives, never a miss. Nothing here depends on
 * Unicode tables, which differ between Node's and RE2's versions.
 */
import { xxHash32 } from 'js-xxhash';

/** Distinct (h1, h2) pairs, open addressing with linear probing. */
export class KeyHashSet {
  private pairs = new Uint32Array(2 * 1024);
  private used = new Uint8Array(1024);
  private count = 0;

  /** A set with room for `expected` pairs before it first grows. */
  constructor(expected = 0) {
    if (expected > 0) this.reserve(expected);
  }

  get size(): number {
    return this.count;
  }

  add(h1: number, h2: number): void {
    if ((this.count + 1) * 2 > this.used.length) this.grow();
    this.insert(h1, h2);
  }

  /**
   * Makes room for `more` pairs beyond those held, in one step: a seal merges each block's keys
   * into the segment's set, and growing by doubling on the way re-inserts every pair held each time.
   */
  reserve(more: number): void {
    let slots = this.used.length;
    while ((this.count + more) * 2 > slots) slots *= 2;
    if (slots > this.used.length) this.rehash(slots);
  }

  /** Adds every pair of `other`. */
  addAll(other: KeyHashSet): void {
    this.reserve(other.count);
    const { pairs, used } = other;
    for (let s = 0; s < used.length; s++) if (used[s] === 1) this.insert(pairs[2 * s]!, pairs[2 * s + 1]!);
  }

  /** Calls `fn` with each pair once. */
  forEach(fn: (h1: number, h2: number) => void): void {
    for (let s = 0; s < this.used.length; s++) if (this.used[s] === 1) fn(this.pairs[2 * s]!, this.pairs[2 * s + 1]!);
  }

  private insert(h1: number, h2: number): void {
    const mask = this.used.length - 1;
    // h1 is already a uniform hash of the key; h2 mixed in keeps keys sharing an h1 apart.
    let s = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
    while (this.used[s] === 1) {
      if (this.pairs[2 * s] === h1 && this.pairs[2 * s + 1] === h2) return;
      s = (s + 1) & mask;
    }
    this.used[s] = 1;
    this.pairs[2 * s] = h1;
    this.pairs[2 * s + 1] = h2;
    this.count++;
  }

  private grow(): void {
    this.rehash(this.used.length * 2);
  }

  private rehash(slots: number): void {
    const { pairs, used } = this;
    this.pairs = new Uint32Array(2 * slots);
    this.used = new Uint8Array(slots);
    this.count = 0;
    for (let s = 0; s < used.length; s++) if (used[s] === 1) this.insert(pairs[2 * s]!, pairs[2 * s + 1]!);
  }
}

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
const UPPER_A = 0x41;
const UPPER_Z = 0x5a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * Cuts the keys of texts given as UTF-8 bytes and adds their hash pairs to a set. One per column:
 * it keeps a scratch buffer for the folded key, grown to the longest run seen.
 */
export class TermKeyCutter {
  private scratch = new Uint8Array(256);
  /**
   * scratch[0, length) by length, made once: js-xxhash hashes a whole array, and a new view per
   * key was garbage at each of a seal's hundreds of thousands of keys (decision 0047).
   */
  private views: Uint8Array[] = [];
  readonly keys: KeyHashSet;

  /** `expectedKeys`: room made at once (a block's cutter is sized by the blocks before it). */
  constructor(expectedKeys = 0) {
    this.keys = new KeyHashSet(expectedKeys);
  }

  /** Adds the keys of the text `bytes[start, end)`. */
  readonly addText = (bytes: Uint8Array, start: number, end: number): void => {
    if (this.scratch.length < end - start) {
      this.scratch = new Uint8Array(end - start);
      this.views = [];
    }
    const key = this.scratch;
    let length = 0;
    for (let i = start; i < end; i++) {
      const b = bytes[i]!;
      if ((b >= LOWER_A && b <= LOWER_Z) || (b >= DIGIT_0 && b <= DIGIT_9)) key[length++] = b;
      else if (b >= UPPER_A && b <= UPPER_Z) key[length++] = b + 0x20;
      else if (b === 0xe2 && i + 2 < end && bytes[i + 1] === 0x84 && bytes[i + 2] === 0xaa) {
        key[length++] = 0x6b; // U+212A KELVIN SIGN → k
        i += 2;
      } else if (b === 0xc5 && i + 1 < end && bytes[i + 1] === 0xbf) {
        key[length++] = 0x73; // U+017F LATIN SMALL LETTER LONG S → s
        i += 1;
      } else if (length > 0) {
        this.addKey(length);
        length = 0;
      }
    }
    if (length > 0) this.addKey(length);
  };

  /**
   * The key in scratch[0, length): hashed as the filter hashes a key string's UTF-8 (term-filter.ts).
   * js-xxhash (pure JS) rather than xxhash-wasm here: the wasm call copies each key into its memory,
   * ~0.5 µs a key at a seal's hundreds of thousands of keys against ~0.05 µs with a view (decision
   * 0034); a test checks the two agree.
   */
  private addKey(length: number): void {
    let key = this.views[length];
    if (!key) {
      key = this.scratch.subarray(0, length);
      this.views[length] = key;
    }
    this.keys.add(xxHash32(key, 0), xxHash32(key, 1));
  }
}
