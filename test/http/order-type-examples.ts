/**
 * One example order of every order type, as the reseller guide shows it,
 * and malformed variants of it: the v1, v2 and PHP-client tests send the
 * same payloads. Every service of these tests charges 0.5 a unit with a
 * min..max of 2..100.
 */

/** Order inputs besides service and target/link, integers as numbers. */
export type ExampleFields = Record<string, string | number>;

export interface TypeExample {
  type: string;
  fields: ExampleFields;
  /** The units the order is charged for. */
  quantity: number;
  /** What the processing queue shows of the order's inputs (the admin order's fields). */
  shown: Record<string, string | number>;
  /** Malformed variants and a fragment of the sentence refusing each. */
  malformed: [ExampleFields, RegExp][];
}

export const EXAMPLE_RATE = '0.5';
export const EXAMPLE_MIN = 2;
export const EXAMPLE_MAX = 100;

export const TYPE_EXAMPLES: TypeExample[] = [
  {
    type: 'Default',
    fields: { quantity: 10 },
    quantity: 10,
    shown: {},
    malformed: [
      [{}, /'quantity' is required/],
      [{ quantity: 10, username: 'someone' }, /'username' is not taken by Default orders/],
    ],
  },
  {
    type: 'Package',
    fields: {},
    quantity: 1,
    shown: {},
    malformed: [[{ quantity: 5 }, /A Package order is one unit: send 'quantity' 1 or leave it out \(it was 5\)/]],
  },
  {
    type: 'Custom Comments',
    fields: { comments: 'great!\nlove it' },
    quantity: 2,
    shown: { comments: 'great!\nlove it' },
    malformed: [
      [{ comments: 'great!\nlove it', quantity: 3 }, /'quantity' is 3 but 'comments' holds 2 lines; send 2 or leave quantity out/],
      [{ comments: '\n\n' }, /'comments' must hold at least one non-empty line/],
    ],
  },
  {
    type: 'Custom Comments Package',
    fields: { comments: 'a\nb\nc' },
    quantity: 1,
    shown: { comments: 'a\nb\nc' },
    malformed: [[{ comments: 'a\nb\nc', quantity: 3 }, /A Custom Comments Package order is one unit/]],
  },
  {
    type: 'Mentions Custom List',
    fields: { usernames: 'ann\nbob' },
    quantity: 2,
    shown: { usernames: 'ann\nbob' },
    malformed: [[{ usernames: 'ann\nbob', hashtags: '#x' }, /'hashtags' is not taken by Mentions Custom List orders/]],
  },
  {
    type: 'Poll',
    fields: { quantity: 10, answer_number: 2 },
    quantity: 10,
    shown: { answer_number: 2 },
    malformed: [[{ quantity: 10, answer_number: 0 }, /'answer_number' is required: an integer from 1 to 100/]],
  },
  {
    type: 'Comment Likes',
    fields: { quantity: 10, username: 'comment_owner' },
    quantity: 10,
    shown: { username: 'comment_owner' },
    malformed: [
      [{ quantity: 10 }, /'username' is required: the comment owner's username/],
      [{ quantity: 10, username: 'two words' }, /'username' is required: the comment owner's username, one word of at most 64 characters/],
    ],
  },
  {
    type: 'Mentions with Hashtags',
    fields: { quantity: 10, usernames: 'ann\nbob', hashtags: '#sale\n#new' },
    quantity: 10,
    shown: { usernames: 'ann\nbob', hashtags: '#sale\n#new' },
    malformed: [[{ quantity: 10, usernames: 'ann' }, /'hashtags' is required: one item per line/]],
  },
  {
    type: 'Mentions Hashtag',
    fields: { quantity: 10, hashtag: '#travel' },
    quantity: 10,
    shown: { hashtag: '#travel' },
    malformed: [[{ quantity: 10, hashtag: `#${'x'.repeat(100)}` }, /'hashtag' is required: the hashtag whose posters are mentioned, one word of at most 100 characters/]],
  },
  {
    type: 'Mentions User Followers',
    fields: { quantity: 10, username: 'natgeo' },
    quantity: 10,
    shown: { username: 'natgeo' },
    malformed: [[{ quantity: 10, usernames: 'natgeo' }, /'usernames' is not taken by Mentions User Followers orders/]],
  },
  {
    type: 'Mentions Media Likers',
    fields: { quantity: 10, media: 'https://instagram.com/p/media1' },
    quantity: 10,
    shown: { media: 'https://instagram.com/p/media1' },
    malformed: [[{ quantity: 10, media: 'instagram.com/p/media1' }, /'media' is required: the post whose likers are mentioned, an http or https URL/]],
  },
  {
    type: 'SEO',
    fields: { quantity: 10, keywords: 'best running shoes\ntrail shoes' },
    quantity: 10,
    shown: { keywords: 'best running shoes\ntrail shoes' },
    malformed: [[{ quantity: 10, keywords: `ok\n${'k'.repeat(201)}` }, /Line 2 of 'keywords' is longer than the limit of 200 characters/]],
  },
  {
    type: 'Invites from Groups',
    fields: { quantity: 10, groups: 'https://facebook.com/groups/runners\nhttps://facebook.com/groups/hikers' },
    quantity: 10,
    shown: { groups: 'https://facebook.com/groups/runners\nhttps://facebook.com/groups/hikers' },
    malformed: [[{ quantity: 10 }, /'groups' is required: one item per line/]],
  },
];
