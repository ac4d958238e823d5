import assert from 'node:assert/strict';
import type { Server } from '@grpc/grpc-js';
import {
  ChannelPool,
  createLogger,
  EmbeddedCoordinator,
  type ExecutorLimits,
  implementService,
  metricsRegistry,
  StrataError,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { testIdentity, waitFor } from '@strata/common/testing';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { ExecutorSettingsPoller } from '../src/executor-settings-poller.js';

const log = createLogger('test', { level: 'silent' });

/**
 * A SettingsService standing in for the master: answers GetExecutorSettings with `limits`, or
 * refuses like a standby while `standby` is set. The other methods are not used by the poller.
 */
async function fakeMaster(state: { limits: ExecutorLimits; standby: boolean }) {
  const unused = async (): Promise<never> => {
    throw new StrataError('invalid', 'not used by this test');
  };
  const { server, port } = await startGrpcServer(
    '127.0.0.1:0',
    [
      {
        definition: SettingsServiceService,
        implementation: implementService(
          SettingsServiceService,
          {
            getExecutorSettings: async () => {
              if (state.standby) throw new StrataError('unavailable', 'This database instance is not the leader.');
              return state.limits;
            },
            getSystemSettings: unused,
            setSystemSettings: unused,
            getAccountSettings: unused,
            setAccountSetting: unused,
          },
          log,
        ),
      },
    ],
    testIdentity(['database']),
  );
  return { server, endpoint: `127.0.0.1:${port}` };
}

async function gauge(name: string): Promise<number | undefined> {
  const metric = await metricsRegistry().getSingleMetric(name)?.get();
  return metric?.values[0]?.value;
}

describe('ExecutorSettingsPoller', () => {
  let coordinator: EmbeddedCoordinator;
  let channels: ChannelPool;
  let server: Server | undefined;
  let poller: ExecutorSettingsPoller | undefined;

  beforeEach(() => {
    coordinator = new EmbeddedCoordinator(log);
    channels = new ChannelPool(testIdentity(['backend']));
  });

  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
    if (server) await stopGrpcServer(server);
    server = undefined;
    channels.close();
    await coordinator.close();
  });

  it('keeps the spec defaults while no master leader exists, and counts the failed polls', async () => {
    poller = new ExecutorSettingsPoller(coordinator, channels, log, 50);
    const failuresBefore = (await metricsRegistry().getSingleMetric('strata_executor_settings_poll_failures_total')?.get())
      ?.values[0]?.value;
    await poller.pollNow();
    await poller.pollNow();
    assert.deepEqual(poller.current(), { queryMaxConcurrent: 10, fileMaxConcurrentRead: 10, rowgroupMaxConcurrentRead: 100 });
    const failuresAfter = (await metricsRegistry().getSingleMetric('strata_executor_settings_poll_failures_total')?.get())
      ?.values[0]?.value;
    assert.equal((failuresAfter ?? 0) - (failuresBefore ?? 0), 2);
  });

  it('applies a change from the leader, tells listeners, exports gauges, and survives a standby answer', async () => {
    const state = {
      limits: { queryMaxConcurrent: 10, fileMaxConcurrentRead: 10, rowgroupMaxConcurrentRead: 100 },
      standby: false,
    };
    const master = await fakeMaster(state);
    server = master.server;
    await coordinator.campaign('database', master.endpoint, { onElected: () => undefined, onDemoted: () => undefined });
    poller = new ExecutorSettingsPoller(coordinator, channels, log, 50);
    const changes: [ExecutorLimits, ExecutorLimits][] = [];
    poller.onChange((next, previous) => changes.push([next, previous]));
    poller.start();

    state.limits = { queryMaxConcurrent: 3, fileMaxConcurrentRead: 4, rowgroupMaxConcurrentRead: 5 };
    await waitFor('the new limits to be applied', () => poller!.current().queryMaxConcurrent === 3, { timeoutMs: 10_000 });
    assert.deepEqual(poller.current(), state.limits);
    assert.deepEqual(changes, [
      [state.limits, { queryMaxConcurrent: 10, fileMaxConcurrentRead: 10, rowgroupMaxConcurrentRead: 100 }],
    ]);
    assert.equal(await gauge('strata_executor_query_max_concurrent'), 3);
    assert.equal(await gauge('strata_executor_file_max_concurrent_read'), 4);
    assert.equal(await gauge('strata_executor_rowgroup_max_concurrent_read'), 5);

    // A standby's refusal leaves the applied limits alone; the next leader answer applies again.
    state.standby = true;
    state.limits = { queryMaxConcurrent: 8, fileMaxConcurrentRead: 4, rowgroupMaxConcurrentRead: 5 };
    await poller.pollNow();
    assert.equal(poller.current().queryMaxConcurrent, 3);
    state.standby = false;
    await waitFor('the limits after the standby answer', () => poller!.current().queryMaxConcurrent === 8, { timeoutMs: 10_000 });
    assert.equal(changes.length, 2);
  });
});
