import type { RoleName } from './role-identity.js';

/**
 * Who may call which internal gRPC service: the one table of the trust boundaries between roles
 * (docs/architecture.md, "Trust boundaries"). Each service names the role that serves it (clients
 * check the server's certificate against it) and the roles whose certificates may call it; a method
 * may narrow or widen that. A server refuses to start a service missing here: default deny.
 */
export interface ServiceAccess {
  /** The role whose processes serve this service. */
  server: RoleName;
  /** Roles allowed to call every method, unless `methods` says otherwise. */
  callers: readonly RoleName[];
  /** Per-method callers (method name as in the proto, e.g. `GetExecutorSettings`). */
  methods?: Readonly<Record<string, readonly RoleName[]>>;
}

export const SERVICE_ACCESS: Readonly<Record<string, ServiceAccess>> = {
  // The relational store: only the gateway speaks for users; workers read their live limits.
  'strata.directory.v1.DirectoryService': { server: 'database', callers: ['gateway'] },
  'strata.incidents.v1.IncidentService': { server: 'database', callers: ['gateway'] },
  'strata.incidents.v1.GroupService': { server: 'database', callers: ['gateway'] },
  'strata.incidents.v1.AlertService': { server: 'database', callers: ['gateway'] },
  'strata.agents.v1.AgentService': { server: 'database', callers: ['gateway'] },
  // Gateways manage rules for users and run the evaluations the leader hands out.
  'strata.alerting.v1.AlertRuleService': { server: 'database', callers: ['gateway'] },
  'strata.webhooks.v1.WebhookService': { server: 'database', callers: ['gateway'] },
  'strata.savedqueries.v1.SavedQueryService': { server: 'database', callers: ['gateway'] },
  'strata.settings.v1.SettingsService': {
    server: 'database',
    callers: ['gateway'],
    methods: { GetExecutorSettings: ['gateway', 'backend'] },
  },
  // The storage policy: gateways change it, workers poll it to enforce retention and schema drops.
  'strata.storage.v1.StoragePolicyService': {
    server: 'database',
    callers: ['gateway'],
    methods: { GetStoragePolicy: ['gateway', 'backend'] },
  },
  // Worker data paths: writes and query fragments come from gateways, segment duties from the master.
  'strata.ingest.v1.IngestService': { server: 'backend', callers: ['gateway'] },
  'strata.query.v1.QueryService': { server: 'backend', callers: ['gateway'] },
  'strata.ingest.v1.SegmentService': { server: 'backend', callers: ['database'] },
  'strata.worker.v1.WorkerService': { server: 'backend', callers: ['gateway', 'database'] },
  // Drains and replication: a worker copies its segments to the others (worker to worker),
  // and the master leader drops the spare copies of a lost worker's segments.
  'strata.worker.v1.SegmentTransferService': {
    server: 'backend',
    callers: ['backend'],
    methods: { DropReplicas: ['backend', 'database'] },
  },
  // Usage and schema drops come from gateways; purge steps from the master leader that runs the job.
  'strata.storage.v1.WorkerStorageService': {
    server: 'backend',
    callers: ['gateway'],
    methods: { PurgeStep: ['database'] },
  },
};

/** `/strata.query.v1.QueryService/ExecuteFragment` → service and method names. */
export function splitMethodPath(path: string): { service: string; method: string } {
  const [, service = '', method = ''] = path.split('/');
  return { service, method };
}

/** The access rule of a service, or an error naming it (a service added without a rule). */
export function accessOf(service: string): ServiceAccess {
  const access = SERVICE_ACCESS[service];
  if (!access) throw new Error(`gRPC service ${service} has no entry in SERVICE_ACCESS (common/src/grpc/service-access.ts)`);
  return access;
}

/** The roles allowed to call `method` of `service`. */
export function callersOf(service: string, method: string): readonly RoleName[] {
  const access = accessOf(service);
  return access.methods?.[method] ?? access.callers;
}
