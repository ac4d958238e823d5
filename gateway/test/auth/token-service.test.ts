import assert from 'node:assert/strict';
import jwt from 'jsonwebtoken';
import { TokenService } from '../../src/auth/token-service.js';

/**
 * The verified-token cache (decision 0032): a token verified once answers from memory until it
 * expires, and never past that; what was never valid is never cached. The clock is the test's,
 * used by the cache and by the signature check alike.
 */
describe('TokenService verification cache', () => {
  const settings = { signingKey: 'k'.repeat(64), issuer: 'strata', audience: 'strata-api', sessionLifetimeSeconds: 600 };
  let clock = Date.now();
  const now = () => clock;
  const refused = { kind: 'unauthenticated' };

  beforeEach(() => {
    clock = Date.now();
  });

  it('answers a token verified before with the same claims', () => {
    const tokens = new TokenService(settings, now);
    const token = tokens.issueSession('user-1');
    const first = tokens.verify(token);
    assert.equal(first.sub, 'user-1');
    assert.equal(tokens.verify(token), first);
    assert.ok(Object.isFrozen(first));
  });

  it('refuses a cached token once it has expired', () => {
    const tokens = new TokenService(settings, now);
    const token = tokens.issueSession('user-1');
    const exp = tokens.verify(token).exp as number;
    clock = exp * 1000 - 1;
    assert.equal(tokens.verify(token).sub, 'user-1');
    clock = exp * 1000;
    assert.throws(() => tokens.verify(token), refused);
  });

  it('verifies again after the cache age and still refuses an expired token', () => {
    const tokens = new TokenService({ ...settings, sessionLifetimeSeconds: 120 }, now);
    const token = tokens.issueSession('user-1');
    tokens.verify(token);
    // Past the cache's 60 s the token is checked anew (still valid at 90 s, expired at 120 s).
    clock += 90_000;
    assert.equal(tokens.verify(token).sub, 'user-1');
    clock += 30_000;
    assert.throws(() => tokens.verify(token), refused);
  });

  it('never caches a refusal: a forged token stays refused, the genuine one is accepted', () => {
    const tokens = new TokenService(settings, now);
    const genuine = tokens.issueSession('user-1');
    const forged = jwt.sign({ typ: 'session', iat: 1, jti: 'x', exp: Math.floor(clock / 1000) + 600 }, 'another-key', {
      algorithm: 'HS512',
      subject: 'user-1',
      issuer: settings.issuer,
      audience: settings.audience,
    });
    for (let i = 0; i < 2; i++) assert.throws(() => tokens.verify(forged), refused);
    assert.equal(tokens.verify(genuine).sub, 'user-1');
    // A token of another key is refused even after the genuine one was cached.
    assert.throws(() => tokens.verify(forged), refused);
    // Expired at issue: refused, and not remembered as valid.
    const expired = new TokenService({ ...settings, sessionLifetimeSeconds: -1 }, now).issueSession('user-1');
    assert.throws(() => tokens.verify(expired), refused);
  });

  it('a token signed with another service key is refused by this one, cached or not', () => {
    const ours = new TokenService(settings, now);
    const theirs = new TokenService({ ...settings, signingKey: 'z'.repeat(64) }, now);
    const token = theirs.issueSession('user-2');
    assert.equal(theirs.verify(token).sub, 'user-2');
    assert.throws(() => ours.verify(token), refused);
  });
});
