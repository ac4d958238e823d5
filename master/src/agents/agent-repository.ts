import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { notFound } from '@strata/common';
import {
  type Attribute,
  type Device,
  RefreshOutcome,
  type RefreshRequest,
  type RefreshResponse,
  type RegistrationToken,
} from '@strata/proto/agents/v1/agents';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

/**
 * Registration tokens and devices of collection agents (docs/api.md "Collection agents").
 *
 * Secrets are 256 random bits with a prefix naming their kind (`sar_` registration, `saf_`
 * refresh), stored as SHA-256 only and shown once. A refresh token is bound to one device of one
 * account and rotates on every approved refresh: the previous one stops working.
 */
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface TokenRow {
  account_id: string;
  token_id: string;
  description: string;
  created_by_user_id: string;
  created_at: string;
  expires_at: string;
  [k: string]: unknown;
}

interface DeviceRow {
  account_id: string;
  device_id: string;
  name: string;
  host_name: string;
  attributes_json: string;
  state: string;
  registration_token_id: string;
  refresh_hash: string;
  created_at: string;
  approved_at: string;
  approved_by_user_id: string;
  last_seen_at: string;
  [k: string]: unknown;
}

const toToken = (r: TokenRow): RegistrationToken => ({
  accountId: r.account_id,
  tokenId: r.token_id,
  description: r.description,
  createdByUserId: r.created_by_user_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

const toDevice = (r: DeviceRow): Device => ({
  accountId: r.account_id,
  deviceId: r.device_id,
  name: r.name,
  hostName: r.host_name,
  attributes: JSON.parse(r.attributes_json) as Attribute[],
  state: r.state,
  registrationTokenId: r.registration_token_id,
  createdAt: r.created_at,
  approvedAt: r.approved_at,
  approvedByUserId: r.approved_by_user_id,
  lastSeenAt: r.last_seen_at,
});

export class AgentRepository {
  constructor(private readonly store: RelationalStore) {}

  async createRegistrationToken(
    accountId: string,
    description: string,
    createdByUserId: string,
    expiresAt: string,
  ): Promise<{ token: RegistrationToken; secret: string }> {
    const a = accountId.toLowerCase();
    const plain = secret('sar_');
    const token: RegistrationToken = {
      accountId: a,
      tokenId: randomUUID(),
      description,
      createdByUserId: createdByUserId.toLowerCase(),
      createdAt: new Date().toISOString(),
      expiresAt,
    };
    await this.store.transaction(async (tx) => {
      if (!(await tx.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [a])))
        throw notFound(`Account ${a} does not exist.`);
      await tx.run('INSERT INTO agent_registration_tokens VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        a,
        token.tokenId,
        sha256(plain),
        description,
        token.createdByUserId,
        token.createdAt,
        expiresAt,
      ]);
    });
    return { token, secret: plain };
  }

  async listRegistrationTokens(accountId: string): Promise<RegistrationToken[]> {
    const rows = await this.store.all<TokenRow>(
      'SELECT * EXCLUDE (secret_hash) FROM agent_registration_tokens WHERE account_id = $1 ORDER BY created_at',
      [accountId.toLowerCase()],
    );
    return rows.map(toToken);
  }

  async deleteRegistrationToken(accountId: string, tokenId: string): Promise<boolean> {
    const key = [accountId.toLowerCase(), tokenId.toLowerCase()];
    return this.store.transaction(async (tx) => {
      if (!(await tx.one('SELECT 1 AS x FROM agent_registration_tokens WHERE account_id = $1 AND token_id = $2', key)))
        return false;
      await tx.run('DELETE FROM agent_registration_tokens WHERE account_id = $1 AND token_id = $2', key);
      return true;
    });
  }

  /**
   * One refresh call. The presented token is first tried as this device's current refresh token,
   * then as a registration token of the account (agents present the configured registration token
   * at every start). A known device keeps its approval; a new one starts pending.
   */
  async refresh(req: RefreshRequest): Promise<RefreshResponse> {
    const refused: RefreshResponse = { outcome: RefreshOutcome.REFRESH_OUTCOME_REFUSED, refreshToken: '', device: undefined };
    if (!req.presentedToken) return refused;
    const a = req.accountId.toLowerCase();
    const hash = sha256(req.presentedToken);
    const now = new Date().toISOString();
    const attributes = JSON.stringify(req.attributes.map((x) => ({ key: x.key, value: x.value })));
    return this.store.transaction(async (tx) => {
      const device = await tx.one<DeviceRow>('SELECT * FROM agent_devices WHERE account_id = $1 AND device_id = $2', [
        a,
        req.deviceId,
      ]);
      const seen = async (refreshHash: string) => {
        await tx.run(
          `UPDATE agent_devices SET name = $3, host_name = $4, attributes_json = $5, refresh_hash = $6, last_seen_at = $7
             WHERE account_id = $1 AND device_id = $2`,
          [a, req.deviceId, req.name, req.hostName, attributes, refreshHash, now],
        );
        return this.deviceIn(tx, a, req.deviceId);
      };
      if (device && device.refresh_hash === hash) {
        if (device.state !== 'approved') {
          // Still waiting: the same refresh token lets the agent ask again.
          return { outcome: RefreshOutcome.REFRESH_OUTCOME_PENDING, refreshToken: req.presentedToken, device: await seen(hash) };
        }
        const next = secret('saf_');
        return { outcome: RefreshOutcome.REFRESH_OUTCOME_APPROVED, refreshToken: next, device: await seen(sha256(next)) };
      }
      const registration = await tx.one<TokenRow>(
        'SELECT * FROM agent_registration_tokens WHERE secret_hash = $1 AND account_id = $2',
        [hash, a],
      );
      if (!registration || registration.expires_at <= now) return refused;
      const next = secret('saf_');
      if (!device) {
        await tx.run('INSERT INTO agent_devices VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)', [
          a,
          req.deviceId,
          req.name,
          req.hostName,
          attributes,
          'pending',
          registration.token_id,
          sha256(next),
          now,
          '',
          '',
          now,
        ]);
        return {
          outcome: RefreshOutcome.REFRESH_OUTCOME_PENDING,
          refreshToken: next,
          device: await this.deviceIn(tx, a, req.deviceId),
        };
      }
      const updated = await seen(sha256(next));
      return {
        outcome: device.state === 'approved' ? RefreshOutcome.REFRESH_OUTCOME_APPROVED : RefreshOutcome.REFRESH_OUTCOME_PENDING,
        refreshToken: next,
        device: updated,
      };
    });
  }

  private async deviceIn(x: SqlExecutor, accountId: string, deviceId: string): Promise<Device | undefined> {
    const row = await x.one<DeviceRow>('SELECT * FROM agent_devices WHERE account_id = $1 AND device_id = $2', [
      accountId,
      deviceId,
    ]);
    return row && toDevice(row);
  }

  async listDevices(accountId: string): Promise<Device[]> {
    const rows = await this.store.all<DeviceRow>(
      'SELECT * FROM agent_devices WHERE account_id = $1 ORDER BY lower(name), device_id',
      [accountId.toLowerCase()],
    );
    return rows.map(toDevice);
  }

  getDevice(accountId: string, deviceId: string): Promise<Device | undefined> {
    return this.store.read((x) => this.deviceIn(x, accountId.toLowerCase(), deviceId));
  }

  async approveDevice(accountId: string, deviceId: string, approvedByUserId: string): Promise<Device> {
    const a = accountId.toLowerCase();
    return this.store.transaction(async (tx) => {
      const device = await this.deviceIn(tx, a, deviceId);
      if (!device) throw notFound(`Agent device ${deviceId} is not registered in this account.`);
      if (device.state !== 'approved')
        await tx.run(
          `UPDATE agent_devices SET state = 'approved', approved_at = $3, approved_by_user_id = $4 WHERE account_id = $1 AND device_id = $2`,
          [a, deviceId, new Date().toISOString(), approvedByUserId.toLowerCase()],
        );
      return (await this.deviceIn(tx, a, deviceId))!;
    });
  }

  /** Revokes a device: its refresh token stops working; registering again starts pending. */
  async deleteDevice(accountId: string, deviceId: string): Promise<boolean> {
    const key = [accountId.toLowerCase(), deviceId];
    return this.store.transaction(async (tx) => {
      if (!(await tx.one('SELECT 1 AS x FROM agent_devices WHERE account_id = $1 AND device_id = $2', key))) return false;
      await tx.run('DELETE FROM agent_devices WHERE account_id = $1 AND device_id = $2', key);
      return true;
    });
  }
}
