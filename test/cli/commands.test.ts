import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS, parseLine } from '../../src/cli/args.js';
import { COMMANDS, findCommand } from '../../src/cli/index.js';

/** Invariants of the command table, so a new entry cannot quietly break parsing or help. */
describe('command table', () => {
  it('names every command once', () => {
    const names = COMMANDS.map((c) => c.words.join(' '));
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives each option name one meaning across commands and never shadows a global option', () => {
    const kinds = new Map<string, boolean>();
    for (const command of COMMANDS) {
      for (const [name, spec] of Object.entries(command.options ?? {})) {
        expect(GLOBAL_OPTIONS[name], `--${name} in ${command.words.join(' ')}`).toBeUndefined();
        const isFlag = spec.kind === 'flag';
        expect(kinds.get(name) ?? isFlag, `--${name}`).toBe(isFlag);
        kinds.set(name, isFlag);
      }
    }
  });

  it('finds commands by singular or plural group name', () => {
    const lookup = findCommand(['services', 'list']);
    expect(lookup.kind === 'command' && lookup.command.words).toEqual(['service', 'list']);
    expect(findCommand(['account']).kind).toBe('group');
    expect(findCommand(['health']).kind).toBe('command');
    expect(findCommand(['nope']).kind).toBe('unknown');
  });
});

describe('entry point', () => {
  it('starts with a shebang so the npm bin runs under node', async () => {
    const source = await readFile(new URL('../../src/cli/main.ts', import.meta.url), 'utf8');
    expect(source.split('\n')[0]).toBe('#!/usr/bin/env node');
  });
});

/** Order ids are random base64url: one in 64 starts with a dash, and the operator must still be able to name it. */
describe('an order id that starts with a dash', () => {
  const specs = { ...GLOBAL_OPTIONS, 'start-count': { kind: 'integer', help: 'h' }, note: { kind: 'text', help: 'h' } } as const;

  it('is read as the argument it is, before or after the options, not as options', () => {
    for (const id of ['-LxYz0123456789abcdefg', '--bcdefghijklmnopqrstu']) {
      expect(parseLine(['order', 'progress', id, '--start-count', '77', '--json'], specs, true)).toEqual({ positionals: ['order', 'progress', id], values: { 'start-count': '77', json: true } });
      expect(parseLine(['order', 'progress', '--start-count', '77', id], specs, true).positionals).toEqual(['order', 'progress', id]);
      expect(parseLine(['order', 'progress', id], specs, false).positionals).toEqual(['order', 'progress', id]);
    }
  });

  it('still refuses a real unknown option, and keeps known ones', () => {
    expect(() => parseLine(['order', 'progress', '-L'], specs, true)).toThrow(/Unknown option '-L'/);
    expect(parseLine(['order', 'get', 'abc', '--note', 'x'], specs, true).values.note).toBe('x');
  });
});
