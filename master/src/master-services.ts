import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { implementService, type Logger } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { DirectoryRepository } from './directory/directory-repository.js';
import { directoryHandlers } from './directory/directory-service.js';
import type { LeaderState } from './leader-state.js';
import { SettingsRepository } from './settings/settings-repository.js';
import { settingsHandlers } from './settings/settings-service.js';

/**
 * Every gRPC service the master serves. Each area adds its service here; handlers reach the
 * relational store only through `leader()`, which refuses on a standby.
 */
export function masterServices(leader: () => LeaderState, log: Logger) {
  const services: { definition: Record<string, unknown>; implementation: UntypedServiceImplementation }[] = [
    {
      definition: DirectoryServiceService,
      implementation: implementService(
        DirectoryServiceService,
        directoryHandlers(() => new DirectoryRepository(leader().store)),
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
  ];
  return services;
}
