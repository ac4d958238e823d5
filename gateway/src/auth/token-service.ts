import { createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import { StrataError } from '@strata/common';
import jwt from 'jsonwebtoken';
import type { TokenScope } from './token-scope.js';

/** The one algorithm Strata signs and accepts; pinned so `alg: none` or RS/HS confusion cannot pass. */
export const JWT_ALGORITHM = 'HS512' as const;

export type TokenType = 'session' | 'pat' | 'agent';

/** The device an agent access token was issued to (claims `acc`, `dev`). */
export interface AgentIdentity {
  accountId: string;
  deviceId: string;
}

export interface TokenClaims {
  /** The user the token acts for (the creator, for a long-lived token). */
  sub: string;
  typ: TokenType;
  /** Present on scoped tokens: a long-lived token, or a session exchanged from one. */
  scope?: TokenScope;
  exp?: number;
  iat: number;
  jti: string;
  /** Set on agent access tokens. */
  agent?: AgentIdentity;
}

export interface TokenSettings {
  signingKey: string;
  issuer: string;
  audience: string;
  sessionLifetimeSeconds: number;
}

const invalidToken = () => new StrataError('unauthenticated', 'The token is invalid or expired.');

/**
 * Tokens verified recently, kept with their claims: a client sends the same token with every
 * request, and checking its HS512 signature and claims again cost ~0.1 ms of each small query
 * (decision 0032). An entry is used only until the token expires (`exp`, as jsonwebtoken checks
 * it) and for at most MAX_AGE_MS; the key never changes while a TokenService lives, so a signature
 * once valid stays valid. Nothing else about a token can change (tokens cannot be revoked,
 * decision 0006): what can — a deleted user, a removed membership, a revoked agent device — is
 * read per request from the principal loader's short cache, as before.
 */
class VerifiedTokens {
  static readonly MAX_AGE_MS = 60_000;
  static readonly MAX_ENTRIES = 10_000;
  private readonly entries = new Map<string, { claims: TokenClaims; untilMs: number }>();

  constructor(private readonly now: () => number) {}

  get(token: string): TokenClaims | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (this.now() < hit.untilMs) return hit.claims;
    this.entries.delete(token);
    return undefined;
  }

  set(token: string, claims: TokenClaims): void {
    const now = this.now();
    const untilMs = Math.min(now + VerifiedTokens.MAX_AGE_MS, claims.exp === undefined ? Infinity : claims.exp * 1000);
    if (untilMs <= now) return;
    // The oldest entry goes first (a Map iterates in insertion order).
    if (this.entries.size >= VerifiedTokens.MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { claims, untilMs });
  }
}

/** Issues and verifies Strata's JWTs (HS512, with issuer and audience). */
export class TokenService {
  /**
   * The signing key as a KeyObject, made once: given a string, jsonwebtoken first tries to parse
   * it as a public key and builds the secret key from it on every verify (~0.7 ms a request).
   */
  private readonly verifyKey: KeyObject;
  private readonly verified: VerifiedTokens;
  private readonly now: () => number;

  /** `now` (ms since the epoch) is the clock of the verified-token cache; tests pass their own. */
  constructor(
    private readonly settings: TokenSettings,
    now: () => number = Date.now,
  ) {
    this.verifyKey = createSecretKey(Buffer.from(settings.signingKey, 'utf8'));
    this.now = now;
    this.verified = new VerifiedTokens(now);
  }

  /** A session token; `scope` and a cap on expiry are carried over when exchanged from a scoped token. */
  issueSession(userId: string, options: { scope?: TokenScope; notAfterSeconds?: number } = {}): string {
    const now = Math.floor(Date.now() / 1000);
    let exp = now + this.settings.sessionLifetimeSeconds;
    if (options.notAfterSeconds !== undefined) exp = Math.min(exp, options.notAfterSeconds);
    return this.sign({ sub: userId, typ: 'session', scope: options.scope, exp, iat: now, jti: randomUUID() });
  }

  /** A long-lived scoped token; `expiresAt` null means it never expires. */
  issueLongLived(userId: string, scope: TokenScope, expiresAt: Date | null): string {
    const now = Math.floor(Date.now() / 1000);
    const exp = expiresAt ? Math.floor(expiresAt.getTime() / 1000) : undefined;
    return this.sign({ sub: userId, typ: 'pat', scope, exp, iat: now, jti: randomUUID() });
  }

  /**
   * An access token of a collection agent (compatibility reference §1.8): inflow on its account
   * only, for `lifetimeSeconds`. The agent reads `exp` and refreshes at half of the lifetime.
   */
  issueAgentAccess(agent: AgentIdentity, lifetimeSeconds: number): { token: string; expiresAt: Date } {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + lifetimeSeconds;
    const scope: TokenScope = { accounts: [{ accountId: agent.accountId.toLowerCase(), inflow: { schemas: ['*'] } }] };
    const token = this.sign({ sub: `agent:${agent.deviceId}`, typ: 'agent', scope, exp, iat: now, jti: randomUUID(), agent });
    return { token, expiresAt: new Date(exp * 1000) };
  }

  private sign(claims: TokenClaims): string {
    const payload: Record<string, unknown> = { typ: claims.typ, iat: claims.iat, jti: claims.jti };
    if (claims.scope) payload.scope = claims.scope;
    if (claims.agent) {
      payload.acc = claims.agent.accountId;
      payload.dev = claims.agent.deviceId;
    }
    if (claims.exp !== undefined) payload.exp = claims.exp;
    return jwt.sign(payload, this.settings.signingKey, {
      algorithm: JWT_ALGORITHM,
      subject: claims.sub,
      issuer: this.settings.issuer,
      audience: this.settings.audience,
      noTimestamp: true,
    });
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; any failure is one 401. */
  verify(token: string): TokenClaims {
    const known = this.verified.get(token);
    if (known) return known;
    const claims = this.verifyAnew(token);
    this.verified.set(token, claims);
    return claims;
  }

  private verifyAnew(token: string): TokenClaims {
    let decoded: jwt.JwtPayload | string;
    try {
      decoded = jwt.verify(token, this.verifyKey, {
        algorithms: [JWT_ALGORITHM],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTimestamp: Math.floor(this.now() / 1000),
      });
    } catch {
      throw invalidToken();
    }
    if (typeof decoded === 'string' || typeof decoded.sub !== 'string') throw invalidToken();
    const typ = decoded.typ;
    if (typ !== 'session' && typ !== 'pat' && typ !== 'agent') throw invalidToken();
    // Sessions and agent tokens always expire; only long-lived tokens may be created without an expiry.
    if (typ !== 'pat' && typeof decoded.exp !== 'number') throw invalidToken();
    let agent: AgentIdentity | undefined;
    if (typ === 'agent') {
      if (typeof decoded.acc !== 'string' || typeof decoded.dev !== 'string') throw invalidToken();
      agent = { accountId: decoded.acc, deviceId: decoded.dev };
    }
    // Frozen: the same claims answer every request with this token (VerifiedTokens).
    return Object.freeze({
      sub: decoded.sub,
      typ,
      scope: decoded.scope as TokenScope | undefined,
      exp: decoded.exp,
      iat: Number(decoded.iat ?? 0),
      jti: String(decoded.jti ?? ''),
      agent,
    });
  }
}
