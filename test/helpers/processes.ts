/**
 * Processes as Linux's /proc shows them, for tests that check a command
 * leaves nothing running behind it.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Running, not gone and not a zombie waiting for whoever adopted it to reap it. */
export function alive(pid: number): boolean {
  try {
    return statFields(pid)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Every process descended from `pid`, those in process groups or sessions of their own included. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(statFields(entry)[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (p: number): void => {
    for (const child of children.get(p) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}
