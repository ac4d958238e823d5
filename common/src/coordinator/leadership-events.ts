import { StrataError } from '../errors.js';
import { errorFields, type Logger } from '../logging.js';
import type { LeadershipHandlers } from './coordinator.js';

/** The error every fencing check throws once leadership is gone. */
export function leadershipLost(election: string): StrataError {
  return new StrataError('unavailable', `leadership of ${election} lost`);
}

/**
 * Delivers one candidate's elected/demoted events to its handlers strictly in order: a demotion
 * that happens while `onElected` is still running is delivered after it returns, never alongside.
 * A handler that throws is logged; it does not stop later events.
 */
export class LeadershipEvents {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly handlers: LeadershipHandlers,
    private readonly log: Logger,
  ) {}

  elected(term: number): void {
    this.enqueue('onElected', () => this.handlers.onElected(term));
  }

  demoted(reason: string): void {
    this.enqueue('onDemoted', () => this.handlers.onDemoted(reason));
  }

  /** Resolves once every event queued so far has been handled. */
  drained(): Promise<void> {
    return this.chain;
  }

  private enqueue(name: string, call: () => void | Promise<void>): void {
    // setImmediate: a handler never runs inside the call that caused the event (campaign,
    // resign), so callers hold their Candidacy before their handlers see it.
    this.chain = this.chain
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(call)
      .catch((err: unknown) => this.log.error({ ...errorFields(err), handler: name }, 'leadership handler failed'));
  }
}
