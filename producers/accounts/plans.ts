/** Plans: an operator changes an account's plan and Japan access; anyone else gets 403. */
import type { Plan, SetPlanBody } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import type { AccountContext } from './context.ts';

export class Plans {
  constructor(private readonly ctx: AccountContext) {}

  async setPlan(
    operatorId: string,
    accountId: string,
    body: SetPlanBody,
  ): Promise<{ account_id: string; plan: Plan; jp_access: boolean }> {
    if (!(await this.ctx.isOperator(operatorId)))
      throw new ApiError('forbidden', 'only operator accounts may change plans');
    if (!(await this.ctx.account(accountId))) throw new ApiError('not_found', `no account ${accountId}`);
    await this.ctx.publish({
      type: 'plan_changed',
      account_id: accountId,
      plan: body.plan,
      jp_access: body.jp_access,
      by: operatorId,
      at: Date.now(),
    });
    return { account_id: accountId, plan: body.plan, jp_access: body.jp_access };
  }
}
