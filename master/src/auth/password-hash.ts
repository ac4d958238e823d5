import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with scrypt (memory-hard, in Node's crypto; nothing to install). Stored form:
 * `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`, so parameters can be raised later without breaking
 * existing hashes. A hash is never reversible and never leaves the master.
 */
const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of a random password: verifying against it costs the same as a real check. */
let dummyHash: Promise<string> | undefined;

/**
 * Checks a password in constant time. With no stored hash (unknown user) it still does the work,
 * so response time does not reveal whether a user name exists.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  if (!dummyHash) dummyHash = hashPassword(randomBytes(16).toString('hex'));
  const hash = stored ?? (await dummyHash);
  const parts = hash.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, expected] = parts;
  const key = await scrypt(password, Buffer.from(salt!, 'base64'), Number(n), Number(r), Number(p));
  const want = Buffer.from(expected!, 'base64');
  return want.length === key.length && timingSafeEqual(want, key) && stored != null;
}
