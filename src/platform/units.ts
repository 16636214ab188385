/**
 * Units of time and size, each defined once, so that a conversion reads as
 * what it is (`timeoutS * MS_PER_SECOND`) and a bare number in the code is
 * always a limit (see the limits files). It imports nothing, so the ledger
 * and the CLI import it directly without loading the logger.
 */
export const MS_PER_SECOND = 1_000; // not a limit: milliseconds in a second
export const MS_PER_MINUTE = 60 * MS_PER_SECOND;
export const MS_PER_HOUR = 60 * MS_PER_MINUTE;
export const MS_PER_DAY = 24 * MS_PER_HOUR;
export const SECONDS_PER_HOUR = 60 * 60;
export const SECONDS_PER_DAY = 24 * SECONDS_PER_HOUR;
export const BYTES_PER_KIB = 1_024; // not a limit: bytes in a kibibyte
export const BYTES_PER_MIB = BYTES_PER_KIB * BYTES_PER_KIB;
