/**
 * The status parts every gateway process holds: the StatusBoard (incidents and maintenance windows
 * as projected, heard at once), the maintenance check the guard runs, and the error log (with the
 * request → account attribution the guard feeds; anonymous errors sampled per client address).
 */

import { StatusBoard } from '../consumers/status/board.ts';
import type { ErrorRecorder } from '../contracts/status.ts';
import { sampledPerAddress } from '../gateways/core/anonymous-errors.ts';
import { RequestAccounts } from '../gateways/core/error-log-hook.ts';
import { Maintenance } from '../gateways/core/maintenance.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { createErrorLog } from '../producers/status/error-log.ts';

export type EdgeStatus = {
  board: StatusBoard;
  maintenance: Maintenance;
  accounts: RequestAccounts;
  errors: ErrorRecorder;
  stop(): void;
};

export async function startEdgeStatus(nats: Nats, log: Logger): Promise<EdgeStatus> {
  const board = await StatusBoard.start(nats, log);
  await board.ready();
  const maintenance = new Maintenance(board);
  return {
    board,
    maintenance,
    accounts: new RequestAccounts(),
    errors: sampledPerAddress(createErrorLog(nats, log)),
    stop() {
      maintenance.stop();
      board.stop();
    },
  };
}
