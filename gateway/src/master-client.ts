import { type ChannelPool, type Coordinator, type PromiseClient, StrataError, type Unsubscribe } from '@strata/common';

/**
 * Reaches the master's gRPC services on whichever database instance currently leads. The leader's
 * endpoint comes from the coordinator; a call that meets a standby or a lost leader ("unavailable")
 * is retried a few times while the election settles, then fails with 503.
 */
export class MasterClient {
  private endpoint: string | undefined;
  private unsubscribe: Unsubscribe | undefined;
  private readonly clients = new Map<object, PromiseClient<never>>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
  ) {}

  start(): void {
    this.unsubscribe = this.coordinator.observeLeader('database', (leader) => {
      this.endpoint = leader?.value;
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  get leaderEndpoint(): string | undefined {
    return this.endpoint;
  }

  /** A promise client for a master service whose every call goes to the current leader. */
  service<
    Def extends Record<
      string,
      {
        path: string;
        requestStream: boolean;
        responseStream: boolean;
        requestSerialize: (v: never) => Buffer;
        responseDeserialize: (b: Buffer) => unknown;
      }
    >,
  >(definition: Def): PromiseClient<Def> {
    const cached = this.clients.get(definition);
    if (cached) return cached as PromiseClient<Def>;
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(definition)) {
      out[name] = async (request: unknown, options?: object) => {
        for (let attempt = 0; ; attempt++) {
          const endpoint = this.endpoint ?? (await this.coordinator.getLeader('database'))?.value;
          try {
            if (!endpoint) throw new StrataError('unavailable', 'No database leader is elected yet.', { retryAfterSeconds: 2 });
            const client = this.channels.client(definition, endpoint) as unknown as Record<
              string,
              (r: unknown, o?: object) => Promise<unknown>
            >;
            return await client[name]!(request, options);
          } catch (err) {
            if (!(err instanceof StrataError) || err.kind !== 'unavailable' || attempt >= 4) throw err;
            // Forget only the endpoint that failed: the election observer may already have set the
            // new leader's, and clearing that would leave the gateway without one until the next change.
            if (this.endpoint === endpoint) this.endpoint = undefined;
            await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
          }
        }
      };
    }
    this.clients.set(definition, out as PromiseClient<never>);
    return out as PromiseClient<Def>;
  }
}
