/** The minor unit every amount is counted in: 1 credit = 1,000,000 micro-credits. */
export const MICRO_PER_CREDIT = 1_000_000; // not a limit: micro-credits in a credit
/** Decimal places of a credit amount: log10(MICRO_PER_CREDIT). */
export const MICRO_DIGITS = 6;
