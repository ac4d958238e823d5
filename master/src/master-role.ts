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
import type { LeaderState } from './leader-state.js';
import { LeaderTerm } from './leader-term.js';
import { masterServices } from './master-services.js';
import { StandbyReplica } from './store/replication/standby-replica.js';

/** Replaces the port of host:port (used when the configured port is 0 and the OS chose one). */
export function withPort(endpoint: string, port: number): string {
  return `${endpoint.slice(0, endpoint.lastIndexOf(':'))}:${port}`;
}

/**
 * The database role: serves the master's gRPC services on `database.endpoint` and campaigns for
 * leadership of the "database" election. Only while elected does it open the relational store and
 * run leader duties; on demotion it stops serving at once, then stops the duties and closes the
 * store, so a standby that shares the data volume can take over the file.
 *
 * Three pieces of state, kept apart on purpose (one variable for both once let a demotion forget
 * the store it had to close, see docs/decisions/0009-leadership-and-placement.md):
 *  - `elected`: the term the coordinator last reported, cleared synchronously on demotion;
 *  - `serving`: what service handlers get from `requireLeader()`, only while `elected` matches;
 *  - `term`: the LeaderTerm that owns the store and duties, torn down by the transition queue.
 * Election events are applied one at a time, in order, so a term is always closed before the next
 * one opens the store.
 *
 * With etcd, the instance keeps its own copy of the store while it does not lead: a
 * `StandbyReplica` follows the database log (decision 0017). It runs between terms, in the same
 * transition queue: stopped (file closed) before a term opens the store, started after a term
 * closed it, so the file is only ever opened by one of the two.
 */
export const startMaster: RoleStarter = async (ctx) => {
  const log = componentLogger(ctx.log, 'master');
  let elected: number | undefined;
  let serving: LeaderState | undefined;
  let term: LeaderTerm | undefined;
  /** Why the last takeover failed (shown in readiness until the next election). */
  let takeoverFailure: string | undefined;
  /** Set when a store could not be closed: this process must not open it again. */
  let wedged: string | undefined;
  let transitions: Promise<void> = Promise.resolve();
  let candidacy: Candidacy | undefined;
  const databaseLog = ctx.coordinator.replicatedLog('database');
  let replica: StandbyReplica | undefined;
  let stopping = false;
  // onElected may fire before campaign() returns; leadership work waits for the candidacy handle.
  let campaignReturned!: () => void;
  const campaigned = new Promise<void>((resolve) => {
    campaignReturned = resolve;
  });

  const requireLeader = (): LeaderState => {
    if (!serving) throw new StrataError('unavailable', 'This database instance is not the leader.', { retryAfterSeconds: 1 });
    return serving;
  };

  const { server, port } = await startGrpcServer(
    ctx.config.database.endpoint,
    masterServices(requireLeader, log),
    ctx.identity,
    (refusal) => log.warn(refusal, 'refused an internal call: the caller lacks the role'),
  );
  const advertised = ctx.config.database.advertiseEndpoint ?? withPort(ctx.config.database.endpoint, port);

  const stepDown = async (reason: string) => {
    const closing = term;
    term = undefined;
    if (!closing) return;
    try {
      await closing.close();
      log.warn({ term: closing.term, reason }, 'stepped down as database leader');
    } catch (err) {
      wedged = `the relational store of term ${closing.term} could not be closed: ${(err as Error).message}`;
      log.error(
        { term: closing.term, ...errorFields(err) },
        'closing the relational store failed; this instance will not lead again',
      );
      await candidacy?.resign().catch(() => undefined);
    }
  };

  /** Follows the log while not leading (only with a replicated coordinator). */
  const followLog = () => {
    if (!databaseLog || replica || term || stopping || wedged) return;
    replica = new StandbyReplica(ctx.config.database.dataPath, databaseLog, componentLogger(log, 'standby-copy'));
  };

  const stopFollowing = async () => {
    const following = replica;
    replica = undefined;
    await following?.stop();
  };

  const becomeLeader = async (newTerm: number) => {
    // A demotion (or a newer election) queued behind us already made this term stale.
    if (elected !== newTerm || wedged) return;
    try {
      const opened = await LeaderTerm.open(newTerm, ctx, candidacy!, log);
      term = opened;
      if (elected !== newTerm) return; // demoted while opening: the queued stepDown closes it
      serving = opened.state;
      takeoverFailure = undefined;
      log.info({ term: newTerm, endpoint: advertised }, 'elected database leader');
    } catch (err) {
      takeoverFailure = `term ${newTerm}: ${(err as Error).message}`;
      log.error({ term: newTerm, ...errorFields(err) }, 'could not take up leadership; stepping aside and campaigning again');
      // Stay a candidate: the store may be locked by a deposed leader that lets go a moment later.
      // Only this term is given up: if the coordinator already demoted it (and perhaps elected us
      // again since), the queued events deal with that.
      if (candidacy!.term === newTerm) candidacy!.stepAside('leader start-up failed');
    }
  };

  candidacy = await ctx.coordinator.campaign('database', advertised, {
    onElected: (newTerm) => {
      elected = newTerm;
      transitions = transitions.then(async () => {
        await campaigned;
        if (elected !== newTerm) return;
        await stopFollowing();
        await becomeLeader(newTerm);
        followLog();
      });
    },
    onDemoted: (reason) => {
      // Stop serving before anything else can run; the store closes in order behind any takeover.
      elected = undefined;
      serving = undefined;
      transitions = transitions.then(async () => {
        await stepDown(reason);
        followLog();
      });
    },
  });
  campaignReturned();
  transitions = transitions.then(followLog);
  log.info({ endpoint: advertised }, 'database role started; campaigning for leadership');

  const handle: RoleHandle = {
    name: 'database',
    readiness: () => {
      if (wedged) return { ready: false, detail: `not campaigning: ${wedged}; restart this instance` };
      if (serving) return { ready: true, detail: `leader (term ${serving.term})` };
      if (elected !== undefined) return { ready: false, detail: `taking up leadership (term ${elected})` };
      if (takeoverFailure)
        return { ready: true, detail: `standby (campaigning again after a failed takeover, ${takeoverFailure})` };
      return { ready: true, detail: 'standby' };
    },
    stop: async () => {
      stopping = true;
      await candidacy?.resign().catch(() => undefined);
      transitions = transitions.then(async () => {
        await stepDown('shutting down');
        await stopFollowing();
      });
      await transitions;
      await stopGrpcServer(server);
    },
  };
  return handle;
};
