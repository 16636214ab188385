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

/**
 * A duration in words, as panels show a service's average time: its two
 * largest units from the first that is not zero, the second left out when
 * it is zero ("2 days 3 hours", "1 hour", "52 minutes 14 seconds",
 * "40 seconds"), rounded to the second.
 */
export function durationInWords(ms: number): string {
  const units: [string, number][] = [
    ['day', MS_PER_DAY],
    ['hour', MS_PER_HOUR],
    ['minute', MS_PER_MINUTE],
    ['second', MS_PER_SECOND],
  ];
  let rest = Math.round(ms / MS_PER_SECOND) * MS_PER_SECOND;
  const counts = units.map(([name, size]) => {
    const count = Math.floor(rest / size);
    rest -= count * size;
    return { name, count };
  });
  const first = counts.findIndex((u) => u.count > 0);
  if (first === -1) return '0 seconds';
  return counts
    .slice(first, first + 2)
    .filter((u) => u.count > 0)
    .map((u) => `${u.count} ${u.name}${u.count === 1 ? '' : 's'}`)
    .join(' ');
}
