/**
 * XXH32 (xxHash's 32-bit hash, https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md) of
 * a byte range, the hash the term filters' layout is defined by (term-filter.ts).
 *
 * Why not only xxhash-wasm, which term-filter.ts uses for the few keys of a query: its h32Raw
 * takes a whole Uint8Array, so hashing a key cut into a scratch buffer needs a view per key and a
 * copy into the WASM memory per call; at a seal's hundreds of thousands of keys that measured
 * ~0.5 µs a key against ~0.17 here (decision 0034). A test checks this against xxhash-wasm on
 * random bytes of every length class (worker/test/term-key-hashes.test.ts).
 */
const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

/** Little-endian 32-bit word at `p`. */
const word = (b: Uint8Array, p: number) => b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24);

const round = (acc: number, input: number) => Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);

/** XXH32 of `bytes[start, start + length)` with `seed`, as an unsigned number. */
export function xxh32(bytes: Uint8Array, start: number, length: number, seed: number): number {
  const end = start + length;
  let i = start;
  let acc: number;
  if (length >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    const limit = end - 16;
    do {
      v1 = round(v1, word(bytes, i));
      v2 = round(v2, word(bytes, i + 4));
      v3 = round(v3, word(bytes, i + 8));
      v4 = round(v4, word(bytes, i + 12));
      i += 16;
    } while (i <= limit);
    acc = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    acc = (seed + P5) | 0;
  }
  acc = (acc + length) | 0;
  for (; i + 4 <= end; i += 4) acc = Math.imul(rotl((acc + Math.imul(word(bytes, i), P3)) | 0, 17), P4);
  for (; i < end; i++) acc = Math.imul(rotl((acc + Math.imul(bytes[i]!, P5)) | 0, 11), P1);
  acc ^= acc >>> 15;
  acc = Math.imul(acc, P2);
  acc ^= acc >>> 13;
  acc = Math.imul(acc, P3);
  acc ^= acc >>> 16;
  return acc >>> 0;
}
