#!/usr/bin/env node
import { runCli } from './index.js';

// exitCode rather than process.exit(), so piped stdout is flushed before Node exits.
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  stderrIsTty: process.stderr.isTTY === true,
});
