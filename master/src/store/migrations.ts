import type { RelationalStore } from './relational-store.js';

/**
 * A versioned schema change. Versions are applied in order, each in its own transaction, and
 * recorded in `schema_migrations`; an applied version is never run again. Never edit a released
 * migration: add a new one.
 */
export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

export async function runMigrations(store: RelationalStore, migrations: Migration[]): Promise<void> {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.version === sorted[i - 1]!.version) throw new Error(`duplicate migration version ${sorted[i]!.version}`);
  }
  await store.transaction(async (tx) => {
    await tx.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at VARCHAR NOT NULL)',
    );
  });
  const applied = new Set((await store.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
  for (const m of sorted) {
    if (applied.has(m.version)) continue;
    await store.transaction(async (tx) => {
      for (const statement of m.statements) await tx.run(statement);
      await tx.run('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
    });
  }
}
