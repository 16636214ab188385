/**
 * API v1 secrets that passed the full check (the SHA-256 of the presented
 * secret compared in constant time with the stored hash), by their API
 * key. A request whose key has an entry here is checked by comparing the
 * presented secret with the entry's in constant time, without hashing it,
 * and the registry then checks that what the entry was verified against
 * still holds: the account is the one loaded, and the hash is still the
 * account's own object, which a rotation replaces.
 *
 * Entries are found by the key, never by the secret: a Map look-up by
 * secret text would compare the guess with a stored secret character by
 * character, in a time that grows with the matching prefix.
 * docs/DECISIONS.md ("A cache of verified secrets") has the reasoning.
 *
 * Bounded: at most `entriesMax` entries, the oldest dropped first; a key
 * without an entry is checked by its hash, as every key was before its
 * first success.
 */
/** What an entry needs of an account (the registry's Account). */
interface KeyHolder {
  profile: { apiKey: string };
}

export interface VerifiedSecret<A extends KeyHolder> {
  account: A;
  secret: string;
  /** The stored hash the secret was verified against: the account's own Buffer at that time. */
  hash: Buffer;
}

/**
 * Whether two texts are equal, in a time that depends on their lengths
 * alone: every character is compared, with no early exit. A length that
 * differs returns at once; the length of a secret is no secret (every
 * issued one has 47 characters).
 */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

export class VerifiedSecrets<A extends KeyHolder> {
  private readonly entries = new Map<string, VerifiedSecret<A>>();

  /** `entriesMax` is VERIFIED_SECRETS_MAX unless a test or a benchmark sets it (0 keeps nothing). */
  constructor(private readonly entriesMax: number) {}

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  find(apiKey: string): VerifiedSecret<A> | undefined {
    return this.entries.get(apiKey);
  }

  /** Remembers a secret that has just passed the full check against `hash`, replacing the key's earlier entry. */
  remember(account: A, secret: string, hash: Buffer): void {
    if (this.entriesMax === 0) return;
    const apiKey = account.profile.apiKey;
    this.entries.delete(apiKey);
    if (this.entries.size >= this.entriesMax) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(apiKey, { account, secret, hash });
  }

  forget(apiKey: string): void {
    this.entries.delete(apiKey);
  }
}
