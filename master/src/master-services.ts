import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { implementService, type Logger } from '@strata/common';
import { AgentServiceService } from '@strata/proto/agents/v1/agents';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { AlertServiceService } from '@strata/proto/incidents/v1/alerts';
import { GroupServiceService } from '@strata/proto/incidents/v1/groups';
import { IncidentServiceService } from '@strata/proto/incidents/v1/incidents';
import { SavedQueryServiceService } from '@strata/proto/savedqueries/v1/saved_queries';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { agentHandlers } from './agents/agent-grpc.js';
import { AgentRepository } from './agents/agent-repository.js';
import { alertHandlers } from './alerts/alert-grpc.js';
import { AlertService } from './alerts/alert-service.js';
import { directoryHandlers } from './directory/directory-service.js';
import { groupHandlers } from './groups/group-grpc.js';
import { GroupService } from './groups/group-service.js';
import { incidentHandlers } from './incidents/incident-grpc.js';
import { IncidentService } from './incidents/incident-service.js';
import type { LeaderState } from './leader-state.js';
import { savedQueryHandlers } from './saved-queries/saved-query-grpc.js';
import { SavedQueryRepository } from './saved-queries/saved-query-repository.js';
import { SettingsRepository } from './settings/settings-repository.js';
import { settingsHandlers } from './settings/settings-service.js';
import { PurgeRepository } from './storage-policy/purge-repository.js';
import { storagePolicyHandlers } from './storage-policy/storage-policy-grpc.js';
import { StoragePolicyRepository } from './storage-policy/storage-policy-repository.js';

/**
 * Every gRPC service the master serves. Each area adds its service here; handlers reach the
 * relational store only through `leader()`, which refuses on a standby.
 */
export function masterServices(leader: () => LeaderState, log: Logger) {
  const incidents = () => new IncidentService(leader().store);
  const services: { definition: Record<string, unknown>; implementation: UntypedServiceImplementation }[] = [
    {
      definition: DirectoryServiceService,
      implementation: implementService(
        DirectoryServiceService,
        directoryHandlers(() => leader().store),
        log,
      ),
    },
    {
      definition: IncidentServiceService,
      implementation: implementService(IncidentServiceService, incidentHandlers(incidents), log),
    },
    {
      definition: GroupServiceService,
      implementation: implementService(
        GroupServiceService,
        groupHandlers(() => new GroupService(leader().store)),
        log,
      ),
    },
    {
      definition: AlertServiceService,
      implementation: implementService(
        AlertServiceService,
        alertHandlers(() => new AlertService(leader().store, incidents())),
        log,
      ),
    },
    {
      definition: AgentServiceService,
      implementation: implementService(
        AgentServiceService,
        agentHandlers(() => new AgentRepository(leader().store)),
        log,
      ),
    },
    {
      definition: SavedQueryServiceService,
      implementation: implementService(
        SavedQueryServiceService,
        savedQueryHandlers(() => new SavedQueryRepository(leader().store)),
        log,
      ),
    },
    {
      definition: SettingsServiceService,
      implementation: implementService(
        SettingsServiceService,
        settingsHandlers(() => new SettingsRepository(leader().store)),
        log,
      ),
    },
    {
      definition: StoragePolicyServiceService,
      implementation: implementService(
        StoragePolicyServiceService,
        storagePolicyHandlers(
          () => new StoragePolicyRepository(leader().store),
          () => new PurgeRepository(leader().store),
        ),
        log,
      ),
    },
  ];
  return services;
}
