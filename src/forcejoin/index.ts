/**
 * Telegram force-join: an account must be a member of the operator's
 * channel before ordering. Self-contained; the order path asks
 * `ForceJoinVerifier.status` and the admin API calls `invalidate` when it
 * relinks or re-marks an account.
 */
export { FORCEJOIN_DEFAULTS, FORCEJOIN_ENV, forceJoinConfigFromEnv, type ForceJoinConfig } from './config.js';
export { getChatMember, TelegramUnavailable, type Membership, type UnavailableReason } from './telegram-client.js';
export {
  ForceJoinVerifier,
  type ForceJoinAccount,
  type ForceJoinStatus,
  type ForceJoinVerifierOptions,
} from './verifier.js';
export * from './limits.js';
