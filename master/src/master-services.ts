import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { implementService, type Logger } from '@strata/common';
import { AgentServiceService } from '@strata/proto/agents/v1/agents';
import { AlertRuleServiceService } from '@strata/proto/alerting/v1/alert_rules';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { AlertServiceService } from '@strata/proto/incidents/v1/alerts';
import { GroupServiceService } from '@strata/proto/incidents/v1/groups';
import { IncidentServiceService } from '@strata/proto/incidents/v1/incidents';
import { SavedQueryServiceService } from '@strata/proto/savedqueries/v1/saved_queries';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { WebhookServiceService } from '@strata/proto/webhooks/v1/webhooks';
import { agentHandlers } from './agents/agent-grpc.js';
import { AgentRepository } from './agents/agent-repository.js';
import { alertRuleHandlers } from './alerting/alert-rule-grpc.js';
import { AlertRuleService } from './alerting/alert-rule-service.js';
import { alertHandlers } from './alerts/alert-grpc.js';
import { AlertService } from './alerts/alert-service.js';
import { announceDirectoryChange } from './directory/directory-changes.js';
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
import { webhookHandlers } from './webhooks/webhook-grpc.js';
import { WebhookService } from './webhooks/webhook-service.js';

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
        directoryHandlers(
          () => leader().store,
          () => {
            const state = leader();
            return announceDirectoryChange(state.coordinator, state.log);
          },
        ),
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
      definition: AlertRuleServiceService,
      implementation: implementService(
        AlertRuleServiceService,
        alertRuleHandlers(() => {
          const state = leader();
          const incidentService = new IncidentService(state.store);
          return new AlertRuleService(state.store, incidentService, new AlertService(state.store, incidentService), state.clock);
        }),
        log,
      ),
    },
    {
      definition: WebhookServiceService,
      implementation: implementService(
        WebhookServiceService,
        webhookHandlers(() => {
          const state = leader();
          return new WebhookService(state.store, state.config.webhooks);
        }),
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
