/**
 * The order types a service can have. Each type says which inputs an order
 * of it takes, how they are checked and how many units it is charged for;
 * the table `ORDER_TYPES` is the only place that knows, so a new type is one
 * entry here. Drip-feed (runs × interval) is an option of `Default` orders
 * on services that offer it. Every function is pure.
 */
import {
  ANSWER_NUMBER_MAX,
  COMMENT_CHARS_MAX,
  COMMENT_LINES_MAX,
  GROUP_CHARS_MAX,
  GROUP_LINES_MAX,
  HASHTAG_CHARS_MAX,
  HASHTAG_LINES_MAX,
  INTERVAL_MINUTES_MAX,
  KEYWORD_CHARS_MAX,
  KEYWORD_LINES_MAX,
  RUNS_MAX,
  URL_CHARS_MAX,
  USERNAME_CHARS_MAX,
  USERNAME_LINES_MAX,
} from './limits.js';

export const ORDER_TYPE_NAMES = [
  'Default',
  'Package',
  'Custom Comments',
  'Custom Comments Package',
  'Mentions Custom List',
  'Poll',
  'Comment Likes',
  'Mentions with Hashtags',
  'Mentions Hashtag',
  'Mentions User Followers',
  'Mentions Media Likers',
  'SEO',
  'Invites from Groups',
  'Subscriptions',
] as const;
export type OrderType = (typeof ORDER_TYPE_NAMES)[number];

export function isOrderType(value: unknown): value is OrderType {
  return (ORDER_TYPE_NAMES as readonly unknown[]).includes(value);
}

/** The inputs kept as text, under the same name in a request and in the order that keeps them. */
export type TextInputs = {
  /** One comment per line, as sent (line ends normalised to \n). */
  comments?: string;
  /** One username per line. */
  usernames?: string;
  /** Comment Likes: the comment owner's username; Mentions User Followers: the account whose followers are mentioned. */
  username?: string;
  /** Mentions with Hashtags: one hashtag per line. */
  hashtags?: string;
  /** Mentions Hashtag: the hashtag whose posters are mentioned. */
  hashtag?: string;
  /** Mentions Media Likers: the URL of the post whose likers are mentioned. */
  media?: string;
  /** SEO: one search keyword per line. */
  keywords?: string;
  /** Invites from Groups: one group (its link or name) per line. */
  groups?: string;
};

/** What an order keeps besides service, target and quantity (absent when not used). */
export type OrderExtras = TextInputs & {
  /** Poll: which answer to vote for, 1-based. */
  answerNumber?: number;
  /** Drip-feed: how many runs of `quantity` units, and the minutes between them. */
  runs?: number;
  interval?: number;
};

/**
 * The inputs an order type reads from a request: every field but service and
 * target. The first six are the fields the Idempotency-Key fingerprint has
 * always covered by position (see orderFingerprint); a new field goes last.
 */
export const ORDER_INPUT_FIELDS = ['quantity', 'comments', 'usernames', 'answer_number', 'runs', 'interval', 'username', 'hashtags', 'hashtag', 'media', 'keywords', 'groups'] as const;
export type OrderInputField = (typeof ORDER_INPUT_FIELDS)[number];

/** The inputs that hold whole numbers. */
export const INTEGER_INPUT_FIELDS = ['quantity', 'answer_number', 'runs', 'interval'] as const satisfies readonly OrderInputField[];
/** The inputs that hold lists, one item per line (API v2 also takes them as JSON arrays of lines). */
export const LIST_INPUT_FIELDS = ['comments', 'usernames', 'hashtags', 'keywords', 'groups'] as const satisfies readonly OrderInputField[];
type ListField = (typeof LIST_INPUT_FIELDS)[number];

export function isOrderInputField(name: string): name is OrderInputField {
  return (ORDER_INPUT_FIELDS as readonly string[]).includes(name);
}

/**
 * An order as the client sent it, checked only by rules that do not depend
 * on the catalogue (the schema, the target): an absent field is absent, not
 * defaulted. Its service's type reads it (readOrderInputs) when the order is
 * decided, after its Idempotency-Key is looked up.
 */
export type OrderPayload = TextInputs & {
  serviceId: number;
  target: string;
  quantity?: number;
  answer_number?: number;
  runs?: number;
  interval?: number;
};

type Body = Readonly<Record<string, unknown>>;
type Refusal = { ok: false; message: string };
export type TypedInput = { ok: true; quantity: number; extras: OrderExtras } | Refusal;
type PartRead = { ok: true; extras: OrderExtras } | Refusal;

/** One input of a type besides its quantity: the field it reads and how. */
interface Part {
  field: OrderInputField;
  read(body: Body): PartRead;
}

/**
 * Where an order's units come from: `sent` in `quantity`; `lines`, the
 * number of lines of its list (a `quantity` sent must equal it); `one`, a
 * package, one unit at the service's price whatever its min..max (a
 * `quantity` sent must be 1).
 */
type QuantityFrom = { from: 'sent' } | { from: 'lines'; list: OrderInputField } | { from: 'one' };

interface OrderTypeSpec {
  quantity: QuantityFrom;
  parts: readonly Part[];
  /** Drip-feed: only Default orders, on services that offer it. */
  dripfeed: boolean;
}

/** Fields of `ORDER_INPUT_FIELDS` a type accepts. */
function fieldsOf(spec: OrderTypeSpec): OrderInputField[] {
  return ['quantity', ...spec.parts.map((p) => p.field), ...(spec.dripfeed ? (['runs', 'interval'] as const) : [])];
}

/**
 * A list sent as text, one item per line. Blank lines are dropped (a
 * trailing newline is not an item); the limits apply to what is left.
 */
function linesOf(body: Body, field: ListField, linesMax: number, charsMax: number): { ok: true; lines: string[] } | Refusal {
  const text = body[field];
  if (typeof text !== 'string') return { ok: false, message: `Field '${field}' is required: one item per line.` };
  const lines = text.split(/\r\n|\n|\r/).map((line) => line.trim()).filter((line) => line !== '');
  if (lines.length === 0) return { ok: false, message: `Field '${field}' must hold at least one non-empty line.` };
  if (lines.length > linesMax) return { ok: false, message: `Field '${field}' has ${lines.length} lines; the limit is ${linesMax} lines.` };
  const long = lines.findIndex((line) => line.length > charsMax);
  if (long >= 0) return { ok: false, message: `Line ${long + 1} of '${field}' is longer than the limit of ${charsMax} characters.` };
  return { ok: true, lines };
}

function listPart(field: ListField, linesMax: number, charsMax: number): Part {
  return {
    field,
    read(body) {
      const list = linesOf(body, field, linesMax, charsMax);
      return list.ok ? { ok: true, extras: { [field]: list.lines.join('\n') } } : list;
    },
  };
}

/** A text field trimmed, or '' when it is absent or not text (which every check of a text field refuses). */
function trimmedText(body: Body, field: string): string {
  const value = body[field];
  if (typeof value !== 'string') {
    // Stryker disable next-line StringLiteral: equivalent: any other text put here holds a space and is no URL, so the name and URL checks refuse it with the same sentence as ''
    return '';
  }
  return value.trim();
}

/** One name without spaces (a username, a hashtag), trimmed; the name is kept as sent, `@` or `#` included. */
function namePart(field: 'username' | 'hashtag', charsMax: number, what: string): Part {
  return {
    field,
    read(body) {
      const text = trimmedText(body, field);
      if (text === '' || text.length > charsMax || /[\s\x00-\x1f\x7f]/.test(text)) {
        return { ok: false, message: `Field '${field}' is required: ${what}, one word of at most ${charsMax} characters.` };
      }
      return { ok: true, extras: { [field]: text } };
    },
  };
}

/** An http(s) URL without spaces or controls. */
function urlPart(field: 'media', what: string): Part {
  return {
    field,
    read(body) {
      const text = trimmedText(body, field);
      if (text.length > URL_CHARS_MAX || !/^https?:\/\/[^\s\x00-\x1f\x7f]+$/i.test(text)) {
        return { ok: false, message: `Field '${field}' is required: ${what}, an http or https URL of at most ${URL_CHARS_MAX} characters.` };
      }
      return { ok: true, extras: { [field]: text } };
    },
  };
}

const answerPart: Part = {
  field: 'answer_number',
  read(body) {
    const answer = body['answer_number'];
    if (!Number.isSafeInteger(answer) || (answer as number) < 1 || (answer as number) > ANSWER_NUMBER_MAX) {
      return { ok: false, message: `Field 'answer_number' is required: an integer from 1 to ${ANSWER_NUMBER_MAX}.` };
    }
    return { ok: true, extras: { answerNumber: answer as number } };
  },
};

const comments = listPart('comments', COMMENT_LINES_MAX, COMMENT_CHARS_MAX);
const usernames = listPart('usernames', USERNAME_LINES_MAX, USERNAME_CHARS_MAX);
const SENT: QuantityFrom = { from: 'sent' };
const counted = (...parts: Part[]): OrderTypeSpec => ({ quantity: SENT, parts, dripfeed: false });

export const ORDER_TYPES: Readonly<Record<OrderType, OrderTypeSpec>> = {
  Default: { quantity: SENT, parts: [], dripfeed: true },
  Package: { quantity: { from: 'one' }, parts: [], dripfeed: false },
  'Custom Comments': { quantity: { from: 'lines', list: 'comments' }, parts: [comments], dripfeed: false },
  'Custom Comments Package': { quantity: { from: 'one' }, parts: [comments], dripfeed: false },
  'Mentions Custom List': { quantity: { from: 'lines', list: 'usernames' }, parts: [usernames], dripfeed: false },
  Poll: counted(answerPart),
  'Comment Likes': counted(namePart('username', USERNAME_CHARS_MAX, "the comment owner's username")),
  'Mentions with Hashtags': counted(usernames, listPart('hashtags', HASHTAG_LINES_MAX, HASHTAG_CHARS_MAX)),
  'Mentions Hashtag': counted(namePart('hashtag', HASHTAG_CHARS_MAX, 'the hashtag whose posters are mentioned')),
  'Mentions User Followers': counted(namePart('username', USERNAME_CHARS_MAX, 'the account whose followers are mentioned')),
  'Mentions Media Likers': counted(urlPart('media', 'the post whose likers are mentioned')),
  SEO: counted(listPart('keywords', KEYWORD_LINES_MAX, KEYWORD_CHARS_MAX)),
  'Invites from Groups': counted(listPart('groups', GROUP_LINES_MAX, GROUP_CHARS_MAX)),
  // A subscription's post is an order of this shape, placed by the operator's
  // processing system (subscription-decide.ts); customers place subscriptions,
  // never these orders directly (readOrderPayload refuses them).
  Subscriptions: counted(namePart('username', USERNAME_CHARS_MAX, 'the account whose posts are delivered to')),
};

/** The sentence refusing `field` on an order of `type`: it names the field and what the type takes. */
export function foreignFieldRefusal(type: OrderType, field: string): string {
  const taken = ['target', ...fieldsOf(ORDER_TYPES[type])].map((f) => `'${f}'`).join(', ');
  return `Field '${field}' is not taken by ${type} orders; they take ${taken}.`;
}

/** The first input field of `body` that `type` does not take, or null. */
export function foreignField(type: OrderType, body: Body): OrderInputField | null {
  const fields = fieldsOf(ORDER_TYPES[type]);
  return ORDER_INPUT_FIELDS.find((field) => body[field] !== undefined && !fields.includes(field)) ?? null;
}

/** The units of an order of `spec` with the inputs `extras` read, or why the quantity sent disagrees. */
function unitsOf(spec: OrderTypeSpec, type: OrderType, body: Body, extras: OrderExtras): { ok: true; quantity: number } | Refusal {
  const sent = body['quantity'];
  const q = spec.quantity;
  if (q.from === 'sent') return sent === undefined ? { ok: false, message: "Field 'quantity' is required." } : { ok: true, quantity: sent as number };
  if (q.from === 'one') {
    if (sent === undefined || sent === 1) return { ok: true, quantity: 1 };
    return { ok: false, message: `A ${type} order is one unit: send 'quantity' 1 or leave it out (it was ${String(sent)}).` };
  }
  const lines = (extras[q.list as ListField] as string).split('\n').length;
  if (sent === undefined || sent === lines) return { ok: true, quantity: lines };
  return { ok: false, message: `Field 'quantity' is ${String(sent)} but '${q.list}' holds ${lines} lines; send ${lines} or leave quantity out.` };
}

/**
 * Reads an order's inputs for a service of type `type`: refuses fields the
 * type does not take, then lets the type read its own. Drip-feed fields
 * (`runs`, `interval`) need a service that offers drip-feed.
 */
export function readOrderInputs(type: OrderType, dripfeed: boolean, body: Body): TypedInput {
  const spec = ORDER_TYPES[type];
  const foreign = foreignField(type, body);
  if (foreign !== null) return { ok: false, message: foreignFieldRefusal(type, foreign) };
  let extras: OrderExtras = {};
  for (const part of spec.parts) {
    const read = part.read(body);
    if (!read.ok) return read;
    extras = { ...extras, ...read.extras };
  }
  const units = unitsOf(spec, type, body, extras);
  if (!units.ok) return units;
  const drip = readDripFeed(dripfeed, body);
  if (!drip.ok) return drip;
  return { ok: true, quantity: units.quantity, extras: { ...extras, ...drip.extras } };
}

function readDripFeed(dripfeed: boolean, body: Body): PartRead {
  const runs = body['runs'];
  const interval = body['interval'];
  if (runs === undefined && interval === undefined) return { ok: true, extras: {} };
  if (!dripfeed) return { ok: false, message: 'This service does not offer drip-feed; send no runs or interval.' };
  if (!Number.isSafeInteger(runs) || (runs as number) < 2 || (runs as number) > RUNS_MAX) {
    return { ok: false, message: `Field 'runs' must be an integer from 2 to ${RUNS_MAX} for a drip-feed order.` };
  }
  if (!Number.isSafeInteger(interval) || (interval as number) < 1 || (interval as number) > INTERVAL_MINUTES_MAX) {
    return { ok: false, message: `Field 'interval' must be an integer from 1 to ${INTERVAL_MINUTES_MAX} (minutes between runs) for a drip-feed order.` };
  }
  return { ok: true, extras: { runs: runs as number, interval: interval as number } };
}

/** Whether an order of this type must lie in the service's min..max. */
export function isRanged(type: OrderType): boolean {
  return ORDER_TYPES[type].quantity.from !== 'one';
}

/**
 * The extras an order keeps, as the request fields that would carry them. An
 * absent answer number gives `answer_number: undefined`, which every reader
 * takes as a field not sent.
 */
function extrasAsFields(extras: OrderExtras): Record<string, unknown> {
  const { answerNumber, ...rest } = extras;
  return { ...rest, answer_number: answerNumber };
}

/**
 * Why a stored order does not follow its type's rules, or null when it
 * does: its inputs, read again by the type as if sent with its quantity
 * (or without it, when the type derives it), give back the same quantity
 * and extras. The verify replay runs this for every order placed.
 */
export function orderShapeProblem(type: OrderType, quantity: number, extras: OrderExtras | undefined): string | null {
  const spec = ORDER_TYPES[type];
  const body = { ...extrasAsFields(extras ?? {}), ...(spec.quantity.from === 'sent' ? { quantity } : {}) };
  const read = readOrderInputs(type, true, body);
  if (!read.ok) return `its inputs break the ${type} type's rules: ${read.message}`;
  if (read.quantity !== quantity) return `a ${type} order of these inputs is ${read.quantity} unit${read.quantity === 1 ? '' : 's'}, not ${quantity}.`;
  const kept = JSON.stringify(Object.entries(extras ?? {}).sort());
  if (JSON.stringify(Object.entries(read.extras).sort()) !== kept) return `its inputs are not kept as the ${type} type reads them.`;
  return null;
}
