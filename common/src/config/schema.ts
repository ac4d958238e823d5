import { z } from 'zod';
import { guidSchema as guid } from '../guid.js';

/**
 * The whole configuration of a Strata process. One file (YAML or JSON) plus STRATA_* environment
 * overrides, validated once at start-up. Objects are strict: an unknown key is a reported problem,
 * not silently ignored. docs/configuration.md documents every key; keep the two in step.
 */

/** host:port; port 0 asks the OS for a free one (tests). */
const endpoint = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port');

const port = z.number().int().min(0).max(65535);

const setupAccount = z.strictObject({
  accountId: guid,
  accountName: z.string().min(1),
});

const setupUser = z.strictObject({
  userId: guid,
  username: z.string().min(1),
  password: z.string().min(1),
  firstname: z.string().default(''),
  lastname: z.string().default(''),
  email: z.string().default(''),
  defaultGlobalPermissions: z.array(z.string()).default([]),
  defaultAccounts: z
    .array(
      z.strictObject({
        accountName: z.string().min(1),
        userPermissions: z.array(z.string()).default([]),
      }),
    )
    .default([]),
});

export const configSchema = z
  .strictObject({
    /** Root of every data directory that is not set explicitly. */
    dataRoot: z.string().default('./data'),
    log: z.strictObject({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info') }).prefault({}),

    database: z
      .strictObject({
        /** Runs the master role (etcd-elected) and its relational store. */
        enable: z.boolean().default(false),
        /** gRPC listen address of the master; also what gateways and workers dial. */
        endpoint: endpoint.default('127.0.0.1:6000'),
        /** Address published to the coordinator when it differs from `endpoint` (e.g. a pod IP). */
        advertiseEndpoint: endpoint.optional(),
        /** Directory of the relational store; default `<dataRoot>/database`. */
        dataPath: z.string().optional(),
        /**
         * The leader publishes a snapshot of the store to etcd once this many changes were logged
         * since the last one; the log entries it covers are then removed (decision 0017).
         */
        snapshotEveryChanges: z.number().int().min(1).max(1_000_000).default(1000),
      })
      .prefault({}),

    backend: z
      .strictObject({
        /** Runs a worker: stores ingested data and executes query fragments. */
        enable: z.boolean().default(false),
        /** gRPC listen address of this worker; must be unique per worker. */
        endpoint: endpoint.default('127.0.0.1:6002'),
        advertiseEndpoint: endpoint.optional(),
        /** Directory of this worker's hot buffer, segments and catalog; default `<dataRoot>/backend`. */
        dataPath: z.string().optional(),
        /**
         * CPU cores this worker may use (DuckDB threads: queries up to this many, ingest one
         * fewer). Default: the container's cgroup CPU limit, else every core. Set it when several
         * workers share a host.
         */
        cores: z.number().int().min(1).optional(),
        /** Below this many free bytes on dataPath the worker refuses writes. */
        minimumFreeSpaceBytes: z
          .number()
          .int()
          .min(0)
          .default(1024 * 1024 * 1024),
        /**
         * How long a draining worker keeps segments it has handed off before unlisting them: a
         * query that started before a handoff may still read them here. At least the longest a
         * query runs (MAX_QUERY_SECONDS); lower only in tests.
         */
        drainGraceSeconds: z.number().min(0).default(310),
        /**
         * Copies of each sealed segment across workers (this worker's included). Set the same on
         * every worker. 1: no copies; a lost volume loses its data.
         */
        replicationFactor: z.number().int().min(1).max(5).default(1),
        /**
         * Hot rows are sealed into a segment once the oldest is this old (or at 250,000 rows):
         * the most a lost volume can lose of acknowledged writes, replication or not.
         */
        sealAgeSeconds: z.number().min(1).max(3600).default(60),
      })
      .prefault({}),

    gateway: z
      .strictObject({
        /** Serves the HTTP API. */
        enable: z.boolean().default(false),
        host: z.string().default('0.0.0.0'),
        port: port.default(5000),
        /** Largest accepted request body in bytes (413 beyond it). */
        maxBodyBytes: z
          .number()
          .int()
          .min(1024)
          .default(64 * 1024 * 1024),
        /** Addresses whose X-Forwarded-For header is trusted for __INFLOW_SOURCE_ADDRESS. */
        trustedProxies: z.array(z.string()).default([]),
      })
      .prefault({}),

    ops: z
      .strictObject({
        /** Serves /healthz, /readyz and /metrics for the roles of this process on its own port. */
        enable: z.boolean().default(true),
        host: z.string().default('0.0.0.0'),
        port: port.default(5001),
      })
      .prefault({}),

    /**
     * Outgoing webhooks (docs/alerting.md, "Webhooks"): only https:// URLs to hosts that resolve to
     * public or private-network addresses, unless a host is named here.
     */
    webhooks: z
      .strictObject({
        /** Hosts (as in the URL, lower case) that may be called over plain http://. */
        allowPlainHttpHosts: z.array(z.string().min(1)).default([]),
        /** Hosts that may resolve to loopback, link-local (cloud metadata) or other special addresses. */
        allowInternalHosts: z.array(z.string().min(1)).default([]),
      })
      .prefault({}),

    etcd: z
      .strictObject({
        /** etcd client URLs. Empty: an embedded single-process coordinator is used. */
        endpoints: z.array(z.string().url()).default([]),
        /** Key prefix of every key Strata writes. */
        prefix: z.string().default('/strata'),
        /** Lease TTL of leader election and worker registrations, in seconds. */
        leaseTtlSeconds: z.number().int().min(1).max(60).default(3),
        /**
         * TLS to etcd (https:// endpoints): the CA that signed etcd's server certificate and, for
         * etcd's --client-cert-auth, this process's client certificate and key (PEM files).
         */
        tls: z
          .strictObject({
            caFile: z.string().min(1).optional(),
            certFile: z.string().min(1).optional(),
            keyFile: z.string().min(1).optional(),
          })
          .prefault({}),
        /** etcd's own user authentication (`etcdctl auth enable`), when used. */
        auth: z
          .strictObject({
            username: z.string().min(1).optional(),
            password: z.string().optional(),
          })
          .prefault({}),
      })
      .prefault({}),

    internalTls: z
      .strictObject({
        /**
         * PEM files of the internal mutual-TLS identity (all three or none): the CA that signs every
         * role's certificate, this process's certificate (its roles as DNS names
         * `<role>.role.strata`) and key. Re-read every `refreshIntervalSeconds` (rotation).
         */
        caFile: z.string().min(1).optional(),
        certFile: z.string().min(1).optional(),
        keyFile: z.string().min(1).optional(),
        refreshIntervalSeconds: z.number().int().min(1).max(86_400).default(60),
        /**
         * Without the files: where a self-generated CA is kept (created on first start); default
         * `<dataRoot>/secrets/internal-tls`. Only processes sharing this directory trust each other.
         */
        generateDir: z.string().optional(),
      })
      .prefault({}),

    auth: z
      .strictObject({
        jwt: z
          .strictObject({
            /** HMAC key for HS512 tokens; at least 32 characters. Required with gateway.enable. */
            signingKey: z.string().min(32, 'must be at least 32 characters').optional(),
            issuer: z.string().default('strata'),
            audience: z.string().default('strata'),
            /** Lifetime of session tokens from POST /auth/token. */
            sessionLifetimeSeconds: z.number().int().min(60).default(86_400),
          })
          .prefault({}),
      })
      .prefault({}),

    setupService: z
      .strictObject({
        enable: z.boolean().default(false),
        provision: z.boolean().default(false),
        accounts: z.array(setupAccount).default([]),
        users: z.array(setupUser).default([]),
      })
      .prefault({}),
  })
  .superRefine((cfg, ctx) => {
    for (const { path, message } of crossFieldProblems(cfg)) ctx.addIssue({ code: 'custom', path, message });
  });

/**
 * Rules that relate several keys. Written over loosely typed input so that they also run when
 * other keys failed validation: every problem is reported in one go.
 */
export function crossFieldProblems(input: unknown): { path: (string | number)[]; message: string }[] {
  const cfg = (input ?? {}) as {
    gateway?: { enable?: unknown };
    database?: { enable?: unknown };
    backend?: { enable?: unknown };
    auth?: { jwt?: { signingKey?: unknown } };
    setupService?: { accounts?: { accountName?: unknown }[]; users?: { defaultAccounts?: { accountName?: unknown }[] }[] };
  };
  const problems: { path: (string | number)[]; message: string }[] = [];
  const tls = (cfg as { internalTls?: Record<string, unknown> }).internalTls ?? {};
  const tlsFiles = ['caFile', 'certFile', 'keyFile'].filter((k) => tls[k] !== undefined);
  if (tlsFiles.length > 0 && tlsFiles.length < 3) {
    problems.push({ path: ['internalTls'], message: 'caFile, certFile and keyFile go together: set all three or none' });
  }
  if (cfg.gateway?.enable === true && !cfg.auth?.jwt?.signingKey) {
    problems.push({ path: ['auth', 'jwt', 'signingKey'], message: 'is required when gateway.enable is true' });
  }
  if (cfg.database?.enable !== true && cfg.backend?.enable !== true && cfg.gateway?.enable !== true) {
    problems.push({ path: [], message: 'no role enabled: set database.enable, backend.enable or gateway.enable' });
  }
  const accounts = Array.isArray(cfg.setupService?.accounts) ? cfg.setupService.accounts : [];
  const names = new Set(accounts.map((a) => a?.accountName));
  const users = Array.isArray(cfg.setupService?.users) ? cfg.setupService.users : [];
  for (const [i, u] of users.entries()) {
    const defaults = Array.isArray(u?.defaultAccounts) ? u.defaultAccounts : [];
    for (const [j, a] of defaults.entries()) {
      if (typeof a?.accountName === 'string' && !names.has(a.accountName))
        problems.push({
          path: ['setupService', 'users', i, 'defaultAccounts', j, 'accountName'],
          message: `names no account in setupService.accounts: ${a.accountName}`,
        });
    }
  }
  return problems;
}

export type StrataConfig = z.output<typeof configSchema>;
