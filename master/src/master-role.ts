import {
  type Candidacy,
  componentLogger,
  errorFields,
  type RoleHandle,
  type RoleStarter,
  StrataError,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { leaderDuties } from './leader-duties.js';
import type { LeaderDuty, LeaderState } from './leader-state.js';
import { masterServices } from './master-services.js';
import { ALL_MIGRATIONS } from './store/all-migrations.js';
import { RelationalStore } from './store/relational-store.js';

/** Replaces the port of host:port (used when the configured port is 0 and the OS chose one). */
export function withPort(endpoint: string, port: number): string {
  return `${endpoint.slice(0, endpoint.lastIndexOf(':'))}:${port}`;
}

/**
 * The database role: serves the master's gRPC services on `database.endpoint` and campaigns for
 * leadership of the "database" election. Only while elected does it open the relational store and
 * run leader duties; on demotion it stops them at once and closes the store, so a standby that
 * shares the data volume can take over the file.
 */
export const startMaster: RoleStarter = async (ctx) => {
  const log = componentLogger(ctx.log, 'master');
  let leader: LeaderState | undefined;
  let running: LeaderDuty[] = [];
  // Election changes are applied one at a time, in order.
  let transitions: Promise<void> = Promise.resolve();
  let candidacy: Candidacy | undefined;
  let leaderReadyTerm: number | undefined;
  // onElected may fire before campaign() returns; leadership work waits for the candidacy handle.
  let campaignReturned!: () => void;
  const campaigned = new Promise<void>((resolve) => {
    campaignReturned = resolve;
  });

  const requireLeader = (): LeaderState => {
    if (!leader) throw new StrataError('unavailable', 'This database instance is not the leader.', { retryAfterSeconds: 1 });
    return leader;
  };

  const { server, port } = await startGrpcServer(
    ctx.config.database.endpoint,
    masterServices(requireLeader, log),
    ctx.identity,
    (refusal) => log.warn(refusal, 'refused an internal call: the caller lacks the role'),
  );
  const advertised = ctx.config.database.advertiseEndpoint ?? withPort(ctx.config.database.endpoint, port);

  const stepDown = async (reason: string) => {
    const state = leader;
    leader = undefined;
    leaderReadyTerm = undefined;
    for (const duty of running.reverse()) {
      await duty.stop().catch((err) => log.error({ duty: duty.name, ...errorFields(err) }, 'leader duty failed to stop'));
    }
    running = [];
    if (state) {
      await state.store.close().catch((err) => log.error(errorFields(err), 'closing the relational store failed'));
      log.warn({ term: state.term, reason }, 'stepped down as database leader');
    }
  };

  const becomeLeader = async (term: number) => {
    try {
      const store = await RelationalStore.open(ctx.config.database.dataPath, {
        migrations: ALL_MIGRATIONS,
        // Fencing: a write commits only while this candidacy still holds the election (a lease
        // alone lets a paused old leader act for seconds: measured 3.5 s, docs/architecture.md).
        commitGuard: () => candidacy!.assertLeadership(),
      });
      const state: LeaderState = {
        term,
        store,
        config: ctx.config,
        coordinator: ctx.coordinator,
        channels: ctx.channels,
        log,
        clock: ctx.clock ?? (() => new Date()),
      };
      leader = state;
      for (const duty of leaderDuties()) {
        await duty.start(state);
        running.push(duty);
      }
      // Ready (for /readyz and tests) only once provisioning and the other duties have started.
      if (leader === state) leaderReadyTerm = term;
      log.info({ term, endpoint: advertised }, 'elected database leader');
    } catch (err) {
      log.error({ term, ...errorFields(err) }, 'could not take up leadership; resigning');
      await stepDown('leader start-up failed');
      await candidacy?.resign().catch(() => undefined);
    }
  };

  candidacy = await ctx.coordinator.campaign('database', advertised, {
    onElected: (term) => {
      transitions = transitions.then(async () => {
        await campaigned;
        await becomeLeader(term);
      });
    },
    onDemoted: (reason) => {
      // Stop leader work before anything else can run: drop the state synchronously.
      leader = undefined;
      leaderReadyTerm = undefined;
      transitions = transitions.then(() => stepDown(reason));
    },
  });
  campaignReturned();
  log.info({ endpoint: advertised }, 'database role started; campaigning for leadership');

  const handle: RoleHandle = {
    name: 'database',
    readiness: () => {
      if (leader && leaderReadyTerm === leader.term) return { ready: true, detail: `leader (term ${leader.term})` };
      if (leader) return { ready: false, detail: `taking up leadership (term ${leader.term})` };
      return { ready: true, detail: 'standby' };
    },
    stop: async () => {
      await candidacy?.resign().catch(() => undefined);
      transitions = transitions.then(() => stepDown('shutting down'));
      await transitions;
      await stopGrpcServer(server);
    },
  };
  return handle;
};
