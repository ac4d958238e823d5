import type { ResolvedConfig } from './config/load.js';
import type { Coordinator } from './coordinator/coordinator.js';
import type { ChannelPool } from './grpc/client.js';
import type { InternalIdentity } from './grpc/internal-identity.js';
import type { Logger } from './logging.js';

/**
 * What the process runner (deploy/src) hands to every role it starts. Roles of one process share
 * the coordinator and the gRPC channel pool, but still talk to each other only through gRPC.
 */
export interface RoleContext {
  config: ResolvedConfig;
  /** Logger with `role` set; roles derive component loggers from it. */
  log: Logger;
  coordinator: Coordinator;
  channels: ChannelPool;
  /** The process's mutual-TLS identity; roles serve gRPC with it (startGrpcServer). */
  identity: InternalIdentity;
  /**
   * The time alert rules are scheduled and evaluated by; the current time unless a test injects a
   * clock (startProcess options), so evaluation tests step time instead of waiting for it.
   */
  clock?: () => Date;
}

/** A running role. */
export interface RoleHandle {
  /** `database`, `backend` or `gateway`. */
  readonly name: string;
  /** Readiness for /readyz, with a short reason when not ready. */
  readiness(): { ready: boolean; detail: string };
  /** Drains in-flight work and stops; resolves when the role holds no more resources. */
  stop(): Promise<void>;
}

/** Every role module exports a starter of this shape. */
export type RoleStarter = (ctx: RoleContext) => Promise<RoleHandle>;
