/**
 * The order types a service can have. Each type says which inputs an order
 * of it takes, how they are checked and how many units it is charged for;
 * the table `ORDER_TYPES` is the only place that knows, so a new type is one
 * entry here. Drip-feed (runs × interval) is an option of `Default` orders
 * on services that offer it. Every function is pure.
 */
import { ANSWER_NUMBER_MAX, COMMENT_CHARS_MAX, COMMENT_LINES_MAX, INTERVAL_MINUTES_MAX, RUNS_MAX, USERNAME_CHARS_MAX, USERNAME_LINES_MAX } from './limits.js';

export const ORDER_TYPE_NAMES = ['Default', 'Package', 'Custom Comments', 'Custom Comments Package', 'Mentions Custom List', 'Poll'] as const;
export type OrderType = (typeof ORDER_TYPE_NAMES)[number];

export function isOrderType(value: unknown): value is OrderType {
  return typeof value === 'string' && (ORDER_TYPE_NAMES as readonly string[]).includes(value);
}

/** What an order keeps besides service, target and quantity (absent when not used). */
export interface OrderExtras {
  /** One comment per line, as sent (line ends normalised to \n). */
  comments?: string;
  /** One username per line. */
  usernames?: string;
  /** Poll: which answer to vote for, 1-based. */
  answerNumber?: number;
  /** Drip-feed: how many runs of `quantity` units, and the minutes between them. */
  runs?: number;
  interval?: number;
}

/** The inputs an order type reads from a request: every field but service and target. */
export const ORDER_INPUT_FIELDS = ['quantity', 'comments', 'usernames', 'answer_number', 'runs', 'interval'] as const;

/**
 * An order as the client sent it, checked only by rules that do not depend
 * on the catalogue (the schema, the target): an absent field is absent, not
 * defaulted. Its service's type reads it (readOrderInputs) when the order is
 * decided, after its Idempotency-Key is looked up.
 */
export type OrderPayload = {
  serviceId: number;
  target: string;
  quantity?: number;
  comments?: string;
  usernames?: string;
  answer_number?: number;
  runs?: number;
  interval?: number;
};

type Body = Readonly<Record<string, unknown>>;
export type TypedInput = { ok: true; quantity: number; extras: OrderExtras } | { ok: false; message: string };

interface OrderTypeSpec {
  /** Fields of `ORDER_INPUT_FIELDS` this type accepts. */
  fields: readonly (typeof ORDER_INPUT_FIELDS)[number][];
  /** False for packages: one unit at the service's price, whatever its min..max. */
  ranged: boolean;
  read(body: Body): TypedInput;
}

function quantityOf(body: Body): TypedInput {
  const quantity = body['quantity'];
  if (quantity === undefined) return { ok: false, message: "Field 'quantity' is required." };
  return { ok: true, quantity: quantity as number, extras: {} };
}

/**
 * A list sent as text, one item per line. Blank lines are dropped (a
 * trailing newline is not an item); the limits apply to what is left.
 */
function linesOf(body: Body, field: 'comments' | 'usernames', linesMax: number, charsMax: number): { ok: true; lines: string[] } | { ok: false; message: string } {
  const text = body[field];
  if (typeof text !== 'string') return { ok: false, message: `Field '${field}' is required: one item per line.` };
  const lines = text.split(/\r\n|\n|\r/).map((line) => line.trim()).filter((line) => line !== '');
  if (lines.length === 0) return { ok: false, message: `Field '${field}' must hold at least one non-empty line.` };
  if (lines.length > linesMax) return { ok: false, message: `Field '${field}' has ${lines.length} lines; the limit is ${linesMax} lines.` };
  const long = lines.findIndex((line) => line.length > charsMax);
  if (long >= 0) return { ok: false, message: `Line ${long + 1} of '${field}' is longer than the limit of ${charsMax} characters.` };
  return { ok: true, lines };
}

function listType(field: 'comments' | 'usernames', linesMax: number, charsMax: number, ranged: boolean): OrderTypeSpec {
  return {
    fields: [field],
    ranged,
    read(body) {
      const list = linesOf(body, field, linesMax, charsMax);
      if (!list.ok) return list;
      // A list's quantity is its length; a package of them is one unit.
      return { ok: true, quantity: ranged ? list.lines.length : 1, extras: { [field]: list.lines.join('\n') } };
    },
  };
}

export const ORDER_TYPES: Readonly<Record<OrderType, OrderTypeSpec>> = {
  Default: { fields: ['quantity', 'runs', 'interval'], ranged: true, read: quantityOf },
  Package: { fields: [], ranged: false, read: () => ({ ok: true, quantity: 1, extras: {} }) },
  'Custom Comments': listType('comments', COMMENT_LINES_MAX, COMMENT_CHARS_MAX, true),
  'Custom Comments Package': listType('comments', COMMENT_LINES_MAX, COMMENT_CHARS_MAX, false),
  'Mentions Custom List': listType('usernames', USERNAME_LINES_MAX, USERNAME_CHARS_MAX, true),
  Poll: {
    fields: ['quantity', 'answer_number'],
    ranged: true,
    read(body) {
      const quantity = quantityOf(body);
      if (!quantity.ok) return quantity;
      const answer = body['answer_number'];
      if (!Number.isSafeInteger(answer) || (answer as number) < 1 || (answer as number) > ANSWER_NUMBER_MAX) {
        return { ok: false, message: `Field 'answer_number' is required: an integer from 1 to ${ANSWER_NUMBER_MAX}.` };
      }
      return { ok: true, quantity: quantity.quantity, extras: { answerNumber: answer as number } };
    },
  },
};

/**
 * Reads an order's inputs for a service of type `type`: refuses fields the
 * type does not take, then lets the type read its own. Drip-feed fields
 * (`runs`, `interval`) need a service that offers drip-feed.
 */
export function readOrderInputs(type: OrderType, dripfeed: boolean, body: Body): TypedInput {
  const spec = ORDER_TYPES[type];
  for (const field of ORDER_INPUT_FIELDS) {
    if (body[field] !== undefined && !spec.fields.includes(field)) {
      return { ok: false, message: `Field '${field}' is not taken by ${type} orders; they take ${spec.fields.length === 0 ? 'only service and target' : spec.fields.join(', ')}.` };
    }
  }
  const read = spec.read(body);
  if (!read.ok) return read;
  const runs = body['runs'];
  const interval = body['interval'];
  if (runs === undefined && interval === undefined) return read;
  if (!dripfeed) return { ok: false, message: 'This service does not offer drip-feed; send no runs or interval.' };
  if (!Number.isSafeInteger(runs) || (runs as number) < 2 || (runs as number) > RUNS_MAX) {
    return { ok: false, message: `Field 'runs' must be an integer from 2 to ${RUNS_MAX} for a drip-feed order.` };
  }
  if (!Number.isSafeInteger(interval) || (interval as number) < 1 || (interval as number) > INTERVAL_MINUTES_MAX) {
    return { ok: false, message: `Field 'interval' must be an integer from 1 to ${INTERVAL_MINUTES_MAX} (minutes between runs) for a drip-feed order.` };
  }
  return { ok: true, quantity: read.quantity, extras: { ...read.extras, runs: runs as number, interval: interval as number } };
}

/** Whether an order of this type must lie in the service's min..max. */
export function isRanged(type: OrderType): boolean {
  return ORDER_TYPES[type].ranged;
}
