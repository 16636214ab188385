/**
 * Reading a paged admin listing to its end: the listings answer a page at a
 * time with `next_cursor`, null on the last page.
 */
import { expect } from 'vitest';
import type { TestServer } from './server.js';

export interface Page<T> {
  status: number;
  items: T[];
  next: string | null;
}

/** Every page of a listing, following next_cursor until it is null; `member` names the array the listing answers. */
export async function allPages<T>(t: Pick<TestServer, 'admin'>, path: string, member: string): Promise<Page<T>[]> {
  const pages: Page<T>[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await t.admin('GET', cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`);
    expect(r.status).toBe(200);
    pages.push({ status: r.status, items: r.body[member], next: r.body.next_cursor });
    cursor = r.body.next_cursor;
    // A listing that never ends is a bug, not a slow test.
    expect(pages.length).toBeLessThan(200);
  } while (cursor !== null);
  return pages;
}
