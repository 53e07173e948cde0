/** What every live-data edge role file (unified, JSON-RPC, gRPC, disk-sync) takes and gives. */
import type { Guard } from '../gateways/core/guard.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import type { EdgeStatus } from './status-parts.ts';

export type Region = 'us' | 'jp';

/** The process's guard and status parts, shared by all its edges. */
export type EdgeParts = { guard: Guard; status: EdgeStatus };

export type StartedEdge = Stoppable & { address: string };

/** Starts one edge of one region on the process's shared live tail. */
export type EdgeStarter = (
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
  edge: EdgeParts,
) => Promise<StartedEdge>;
