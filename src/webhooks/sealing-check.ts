/**
 * The start-up check of the webhook sealing key. Endpoint secrets are
 * sealed under a key kept outside LMDB (secret-box.ts), so a data directory
 * restored from a snapshot without that key holds secrets this server cannot
 * open: every delivery would fail. The server refuses to start then, with a
 * sentence naming the key it needs (the id of the key that sealed them is
 * kept in `meta`), unless the operator starts it with WEBHOOKS_ROTATE_SECRETS:
 * then each such endpoint gets a new secret and is disabled
 * (`WebhookDirectory.reseal`) until its owner rotates and enables it.
 */
import type { Store } from '../wal/index.js';
import type { WebhookEndpoint } from './records.js';
import { loadSecretKey, opensWith, SECRET_KEY_FILE, type SealingKey } from './secret-box.js';

/** The `meta` key of the id of the key the stored secrets are sealed with. */
export const SEALING_KEY_ID_KEY = 'webhookSealingKeyId';

export class SealingKeyMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealingKeyMismatch';
  }
}

export interface SealingCheck {
  sealing: SealingKey;
  /** Endpoints whose secret the key does not open (only when rotating; else the check throws). */
  unreadable: WebhookEndpoint[];
}

/** Loads the sealing key and checks it against every stored endpoint secret; throws `SealingKeyMismatch` naming the key needed. */
export function checkSealingKey(store: Store, dataDir: string, configured: string | null, rotate: boolean): SealingCheck {
  const endpoints = [...store.tables.webhooks.getRange()].map(({ value }) => value as WebhookEndpoint);
  const sealing = loadSecretKey(dataDir, configured, { create: endpoints.length === 0 || rotate });
  const unreadable = sealing === null ? endpoints : endpoints.filter((e) => !opensWith(sealing.key, e.secret));
  if (unreadable.length > 0 && !rotate) {
    throw new SealingKeyMismatch(mismatch(store, dataDir, sealing, unreadable.length, endpoints.length));
  }
  return { sealing: sealing!, unreadable };
}

function mismatch(store: Store, dataDir: string, sealing: SealingKey | null, unreadable: number, total: number): string {
  const stored = store.tables.meta.get(SEALING_KEY_ID_KEY) as string | undefined;
  const needed = stored === undefined ? 'the key that sealed them' : `the key whose id is ${stored}`;
  const have =
    sealing === null
      ? `this server has no sealing key (WEBHOOKS_SECRET_KEY is not set and ${dataDir}/${SECRET_KEY_FILE} does not exist)`
      : `they do not open with this server's key from ${sealing.source} (id ${sealing.id})`;
  return (
    `${unreadable} of the ${total} webhook endpoints stored in ${dataDir} have secrets sealed with ${needed}, and ${have}. ` +
    `Start with that key: set WEBHOOKS_SECRET_KEY to it, or put its ${SECRET_KEY_FILE} file in ${dataDir} ` +
    '(a key file\'s id is `base64 -d webhook-secrets.key | sha256sum | cut -c1-16`). ' +
    'Or start once with WEBHOOKS_ROTATE_SECRETS=true: those endpoints then get new secrets and are disabled until their owners rotate their secrets and enable them.'
  );
}
