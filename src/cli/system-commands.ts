import type { Command } from './command.js';

/** Commands about the server itself rather than an account or a service. */
export const SYSTEM_COMMANDS: readonly Command[] = [
  {
    words: ['health'],
    summary: 'check that the admin API answers (needs no token)',
    auth: false,
    request: () => ({ method: 'GET', path: '/healthz' }),
    render: () => 'The server is up.\n',
  },
];
