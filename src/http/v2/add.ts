/**
 * API v2's `add`: the same inputs as a v1 order under the dialect's names
 * (`link` for the target), read by the service's order type exactly as v1
 * reads them, and handed to the shared order intake. An empty field counts
 * as absent, as panels treat it; a field no type takes, or one the
 * service's type does not take, is refused by name, so that nothing sent is
 * silently dropped. A refusal goes through the actor too, so the ban and
 * the rate limit come first.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { foreignField, foreignFieldRefusal, INTEGER_INPUT_FIELDS, isOrderInputField, readOrderPayload, type ServiceRecord } from '../../ledger/index.js';
import { assert } from '../../platform/index.js';
import type { AppContext } from '../context.js';
import { checkOrderInput } from '../orders/order-input.js';
import { orderRequest, refusedOrder, submitOrder } from '../orders/order-submit.js';
import type { Answer } from '../transport/answer.js';
import type { OutcomeRenderer } from '../transport/deliver.js';
import type { Exchange } from '../transport/reply.js';
import { inV2Names, renderV2Error, storedError, v2Sentence, type V2Errors } from './errors.js';
import type { V2Params } from './params.js';
import { subscribe } from './subscription.js';

const ok = (body: string): Answer => ({ status: 200, body });
const invalid = (message: string): ErrorOutcome => errorOutcome('VALIDATION', message);

/** A whole number as a form carries it (decimal text), or null. */
function wholeNumber(text: string): number | null {
  if (!/^-?[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** The fields of `add` that are not order inputs. */
const ADD_FIELDS: readonly string[] = ['key', 'action', 'service', 'link'];

/**
 * The order inputs of the request, as v1 would carry them: integers read
 * from their decimal text, the rest as sent; an empty field is absent. A
 * field that no order type takes is refused, named, instead of ignored; so
 * is one the service's type does not take (readOrderInputs, in the actor).
 */
function orderInputs(params: V2Params, service: ServiceRecord | null): { ok: true; body: Record<string, unknown> } | { ok: false; error: ErrorOutcome } {
  const body: Record<string, unknown> = {};
  for (const [name, text] of params) {
    if (ADD_FIELDS.includes(name)) continue;
    if (!isOrderInputField(name)) {
      const sentence = service === null ? `Field '${name}' is not a field of add.` : foreignFieldRefusal(service.type, name);
      return { ok: false, error: invalid(inV2Names(sentence)) };
    }
    if (text === '') continue;
    if (!(INTEGER_INPUT_FIELDS as readonly string[]).includes(name)) {
      body[name] = text;
      continue;
    }
    const n = wholeNumber(text);
    if (n === null) return { ok: false, error: invalid(`Field '${name}' must be a whole number.`) };
    body[name] = n;
  }
  return { ok: true, body };
}

/**
 * Without a link no order is placed; when the service's type also refuses
 * one of the fields sent, that field is the sentence, since it says what the
 * client got wrong (an order of another type, or for another service).
 */
function missingLink(service: ServiceRecord | null, body: Record<string, unknown>): ErrorOutcome {
  const noLink = invalid('Send the link to promote in the link field.');
  if (service === null) return noLink;
  const foreign = foreignField(service.type, body);
  return foreign === null ? noLink : invalid(inV2Names(foreignFieldRefusal(service.type, foreign)));
}

export function add(ex: Exchange, ctx: AppContext, account: Account, params: V2Params, idempotency: string | null, dialect: V2Errors): void {
  const refused = (error: ErrorOutcome): void => submitOrder(ex, ctx, account, refusedOrder(error), false);
  const serviceId = parsePositiveId(params.get('service') ?? '');
  if (serviceId === null) return refused(errorOutcome('SERVICE', 'Incorrect service ID'));
  const service = ctx.catalog.get(serviceId);
  if (service !== null && service.type === 'Subscriptions') return subscribe(ex, ctx, account, params, service, idempotency);
  const inputs = orderInputs(params, service);
  if (!inputs.ok) return refused(inputs.error);
  const link = params.get('link') ?? '';
  if (link === '') return refused(missingLink(service, inputs.body));
  const checked = checkOrderInput({ service: serviceId, target: link, ...inputs.body }, ctx.limits.targetCharsMax, () => service);
  if (!checked.ok) {
    // v1 names its field 'target'; this dialect calls it the link.
    const aboutLink = checked.error.message.includes("'target'");
    return refused(aboutLink ? invalid(`Incorrect link: send an http or https URL of at most ${ctx.limits.targetCharsMax} characters, without spaces or control characters.`) : checked.error);
  }
  // The QTY sentence names the bound broken by the quantity as the actor
  // reads it: by the same service record, so by the same type.
  const read = readOrderPayload(checked.payload, checked.service);
  dialect.quantity = read.ok ? read.input.quantity : null;
  submitOrder(ex, ctx, account, orderRequest(checked.payload, checked.service, idempotency), false, addAnswer(ctx, dialect));
}

/** The answer to an accepted `add`, or to its replay under the same Idempotency-Key. */
function addAnswer(ctx: AppContext, dialect: V2Errors): OutcomeRenderer {
  return (outcome) => {
    if (outcome.kind === 'placed') return ok(`{"order":${outcome.order.number}}`);
    assert(outcome.kind === 'replay', 'an add answers a placed order or a replay', outcome.kind);
    const { record } = outcome;
    if (record.order !== null) {
      const order = ctx.orders.read(record.order);
      assert(order !== undefined, 'the order an idempotency record names is stored', record.order);
      return ok(`{"order":${order.number ?? null}}`);
    }
    // A remembered refusal: the stored v1 error body, told in this dialect.
    return ok(renderV2Error(v2Sentence(storedError(record.body), dialect.quantity)));
  };
}
