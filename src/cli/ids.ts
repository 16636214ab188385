/**
 * The ids a command line names, and what each must look like, checked
 * before anything is sent: a word that cannot be an id is a usage error
 * (exit 2, with the command's usage line), never a request the server
 * answers NOT_FOUND.
 *
 * Accounts, services, webhook endpoints, refills and subscriptions are
 * numbered from 1 (the admin API's routes take only such a number). Orders have two names:
 * the opaque order id (22 base64url characters, which may start with a
 * dash) and the order number resellers quote from API v2; `order show`
 * takes either, the commands that change an order take its id, as the
 * admin API does.
 */
import { ORDER_ID_PATTERN, parsePositiveId } from '../ids/index.js';
import { UsageError } from './errors.js';

export type IdKind = 'account' | 'service' | 'webhook' | 'refill' | 'subscription' | 'order' | 'order-or-number';

/** A positional argument: its name in usage lines and the id it must be. */
export interface Positional {
  name: string;
  id: IdKind;
}

export const ACCOUNT_ID: Positional = { name: 'ID', id: 'account' };
export const SERVICE_ID: Positional = { name: 'ID', id: 'service' };
export const WEBHOOK_ID: Positional = { name: 'ID', id: 'webhook' };
export const REFILL_ID: Positional = { name: 'ID', id: 'refill' };
export const ORDER_ID: Positional = { name: 'ID', id: 'order' };
export const SUBSCRIPTION_ID: Positional = { name: 'ID', id: 'subscription' };

const NUMBERED: Record<Exclude<IdKind, 'order' | 'order-or-number'>, string> = {
  account: 'an account id',
  service: 'a service id',
  webhook: 'a webhook endpoint id',
  refill: 'a refill id',
  subscription: 'a subscription id',
};

/** `text` if it can be an id of `kind`; else a usage error naming `label` and what it must be. */
export function checkId(kind: IdKind, text: string, label: string): string {
  if (kind === 'order' || kind === 'order-or-number') {
    if (ORDER_ID_PATTERN.test(text) || (kind === 'order-or-number' && parsePositiveId(text) !== null)) return text;
    const what = kind === 'order' ? 'an order id (22 letters, digits, - and _)' : 'an order id (22 letters, digits, - and _) or an order number';
    throw new UsageError(`${label} must be ${what}, not "${text}".`);
  }
  if (parsePositiveId(text) !== null) return text;
  throw new UsageError(`${label} must be ${NUMBERED[kind]}, a whole number from 1 (like 42), not "${text}".`);
}
