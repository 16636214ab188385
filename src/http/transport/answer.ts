/**
 * The HTTP answer to a wallet decision's outcome: the one place where an
 * outcome becomes a status and a body. The actor calls it too (injected, see
 * ActorContext.renderAnswer) for the Idempotency-Key record it writes in the
 * decision's commit, so that a retry is answered byte for byte as the first
 * request was.
 */
import { renderError } from '../../errors/index.js';
import type { Outcome } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { assert, InvariantError } from '../../platform/index.js';
import { renderBalance, renderOrderPlaced, renderSubscription } from '../../wire/index.js';

export interface Answer {
  status: number;
  body: string;
}

export function renderAnswer(outcome: Outcome, requestId: string): Answer {
  switch (outcome.kind) {
    case 'placed':
      return { status: 201, body: renderOrderPlaced(outcome.order, outcome.balance) };
    case 'balance':
      return { status: 200, body: renderBalance(outcome.credits, outcome.unlimitedExpiresMs) };
    case 'credited':
      return { status: 200, body: `{"ok":true,"credits":${formatMicro(outcome.balance)}}` };
    // The two answers of one order inside a cancel batch, and of an operator's move.
    case 'moved':
      return { status: 200, body: `{"status":"${outcome.order.status}","refund":${formatMicro(outcome.refund)}}` };
    case 'cancel-requested':
      return { status: 200, body: `{"status":"${outcome.order.status}","cancel_requested":true}` };
    case 'refill-opened':
      return { status: 200, body: `{"refill":${outcome.refill.id}}` };
    case 'error':
      return { status: outcome.error.status, body: renderError(outcome.error, requestId) };
    case 'replay':
      return { status: outcome.record.status, body: outcome.record.body };
    // v1's answer to a placed subscription, remembered under its Idempotency-Key too; API v2 answers with its own.
    case 'subscribed':
      assert(outcome.subscription.orders.length === 0, 'a subscription has no orders when it is placed', outcome.subscription.id);
      return { status: 201, body: renderSubscription(outcome.subscription, []) };
    case 'changed':
    case 'pass':
      // Their answers are built from state the handler reads (the account, the order, a stored row).
      throw new InvariantError(`a ${outcome.kind} outcome has no answer of its own`);
  }
}
