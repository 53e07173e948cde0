/**
 * Who may hold which scopes: `status:admin` (and any scope an empty set never implies) goes only on
 * keys of operator accounts (made by `npm run operator -- grant`), at creation and at every scope edit.
 */
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { OPERATOR_ONLY_SCOPES } from '../../contracts/status.ts';

/** Throws 403 `forbidden` when `scopes` name an operator-only scope and the account is no operator. */
export async function assertMayGrant(
  scopes: readonly Scope[],
  isOperator: () => Promise<boolean>,
): Promise<void> {
  const restricted = scopes.filter((s) => OPERATOR_ONLY_SCOPES.has(s));
  if (restricted.length === 0 || (await isOperator())) return;
  throw new ApiError('forbidden', `only operator accounts may create keys with ${restricted.join(', ')}`);
}
