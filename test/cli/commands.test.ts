import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS } from '../../src/cli/args.js';
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
