/**
 * mulberry32: a tiny seeded 32-bit PRNG. Every randomised test and script
 * (kill cycles, simulation, fuzzing) draws from it, so a failing seed
 * replays the same run anywhere.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
