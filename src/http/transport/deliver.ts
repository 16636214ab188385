/**
 * Turns an actor's delivery into an HTTP reply: rate-limit headers on every
 * response that counted against a key, then, once the events it depends on
 * are durable, the status and body. An outcome the actor remembered under
 * an Idempotency-Key was rendered once, into the key's record, and that
 * record's answer is the reply.
 */
import type { Account, Delivery } from '../../actors/index.js';
import type { Outcome } from '../../ledger/index.js';
import { errorOutcome } from '../../errors/index.js';
import { assert } from '../../platform/index.js';
import { renderAnswer, type Answer } from './answer.js';
import type { AppContext } from '../context.js';
import { pushRateHeaders } from './rate-headers.js';
import { guarded, send, sendError, type Exchange } from './reply.js';

export type PassHandler = () => { status: number; body: string } | null;
/** Answers an accepted or replayed outcome; API v2 passes its own (errors follow the exchange's dialect). */
export type OutcomeRenderer = (outcome: Exclude<Outcome, { kind: 'error' | 'pass' }>) => Answer;

export function unavailable(ex: Exchange, message: string, close = false): void {
  sendError(ex, errorOutcome('UNAVAILABLE', message, { retry_after: 1 }), ['Retry-After', '1'], close);
}

/** The default pass handler: a command that can pass needs its own. */
const NO_PASS_HANDLER: PassHandler = () => null;

/** The answer to an accepted or replayed outcome: the dialect's own, else the remembered one, else v1's rendering. */
function answerOf(ex: Exchange, delivery: Delivery, outcome: Exclude<Outcome, { kind: 'error' | 'pass' }>, render: OutcomeRenderer | undefined): Answer {
  if (render !== undefined) return render(outcome);
  return delivery.remembered ?? renderAnswer(outcome, ex.requestId);
}

export function deliver(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  delivery: Delivery | null,
  onPass: PassHandler = NO_PASS_HANDLER,
  close = false,
  render?: OutcomeRenderer,
): void {
  if (delivery === null) {
    unavailable(ex, 'This wallet has too many requests in flight; retry in a second.', close);
    return;
  }
  const { decision } = delivery;
  if (decision.rate !== null) pushRateHeaders(ex.headers, ctx.rateLimitHeaders, account.actor.state.wallet.rateLimitPerMinute, decision.rate);
  const finish = (): void => {
    const outcome = decision.outcome;
    switch (outcome.kind) {
      case 'replay': {
        const answer = answerOf(ex, delivery, outcome, render);
        send(ex, answer.status, answer.body, ['Idempotent-Replayed', 'true'], close);
        return;
      }
      case 'error': {
        const { error } = outcome;
        if (error.code === 'RATE') {
          ctx.abuse.refused(account.profile.id, account.actor.state.wallet.rateLimitPerMinute);
          sendError(ex, error, ['Retry-After', String(error.extra?.['retry_after'] ?? 1)], close);
        } else if (delivery.remembered !== null && ex.dialect === null) {
          // A remembered refusal (BALANCE, QTY, …): its record holds v1's error body for this request.
          send(ex, delivery.remembered.status, delivery.remembered.body, [], close, error.code);
        } else {
          sendError(ex, error, [], close);
        }
        return;
      }
      case 'pass': {
        const reply = onPass();
        assert(reply !== null, 'a passing command needs a pass handler');
        // The pass handler read the store: the reply waits until all it could see is durable.
        ex.barrier = () => ctx.wal.readBarrier();
        send(ex, reply.status, reply.body, [], close);
        return;
      }
      default: {
        const answer = answerOf(ex, delivery, outcome, render);
        send(ex, answer.status, answer.body, [], close);
      }
    }
  };
  if (delivery.durable === null) finish();
  // A rejected promise means the commit failed: the process is stopping
  // (fail-stop) and this request must not be answered.
  else delivery.durable.then(() => guarded(ctx, ex, finish), () => {});
}
