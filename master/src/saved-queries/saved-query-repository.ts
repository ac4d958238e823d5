import { randomUUID } from 'node:crypto';
import type { SavedQuery } from '@strata/proto/savedqueries/v1/saved_queries';
import type { RelationalStore } from '../store/relational-store.js';

interface Row {
  account_id: string;
  query_id: string;
  name: string;
  query: string;
  created_by_user_id: string;
  created_at: string;
  [k: string]: unknown;
}

const toSavedQuery = (r: Row): SavedQuery => ({
  accountId: r.account_id,
  queryId: r.query_id,
  name: r.name,
  query: r.query,
  createdByUserId: r.created_by_user_id,
  createdAt: r.created_at,
});

/** Saved queries in the relational store; input is validated by the gateway. */
export class SavedQueryRepository {
  constructor(private readonly store: RelationalStore) {}

  async list(accountId: string): Promise<SavedQuery[]> {
    const rows = await this.store.all<Row>('SELECT * FROM saved_queries WHERE account_id = $1 ORDER BY lower(name), created_at', [
      accountId.toLowerCase(),
    ]);
    return rows.map(toSavedQuery);
  }

  async get(accountId: string, queryId: string): Promise<SavedQuery | undefined> {
    const row = await this.store.one<Row>('SELECT * FROM saved_queries WHERE account_id = $1 AND query_id = $2', [
      accountId.toLowerCase(),
      queryId.toLowerCase(),
    ]);
    return row && toSavedQuery(row);
  }

  async create(accountId: string, name: string, query: string, createdByUserId: string): Promise<SavedQuery> {
    const saved: SavedQuery = {
      accountId: accountId.toLowerCase(),
      queryId: randomUUID(),
      name,
      query,
      createdByUserId: createdByUserId.toLowerCase(),
      createdAt: new Date().toISOString(),
    };
    await this.store.transaction((tx) =>
      tx.run('INSERT INTO saved_queries VALUES ($1, $2, $3, $4, $5, $6)', [
        saved.accountId,
        saved.queryId,
        saved.name,
        saved.query,
        saved.createdByUserId,
        saved.createdAt,
      ]),
    );
    return saved;
  }

  async delete(accountId: string, queryId: string): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      const key = [accountId.toLowerCase(), queryId.toLowerCase()];
      if (!(await tx.one('SELECT 1 AS x FROM saved_queries WHERE account_id = $1 AND query_id = $2', key))) return false;
      await tx.run('DELETE FROM saved_queries WHERE account_id = $1 AND query_id = $2', key);
      return true;
    });
  }
}
