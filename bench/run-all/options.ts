/**
 * The options of `npm run bench` (bench/run-all.ts): the help text, the sections, the targets the report checks, and the parser.
 */
import { parseArgs } from 'node:util';
import { pointList, type ScalingPoint } from '../http/scaling.js';
import { intList, positiveInt, QUIET_OPTION_SPECS, quietOptions, type QuietOptions } from '../http/util.js';

export const HELP = `Usage: npm run bench -- [options]

  --quick               about 3 minutes: one run of each figure, short runs, scaling to 100,000
                        accounts (default: two runs of each, 10 s runs, and 100,000 accounts with 1,000,000 stored
                        orders; about 7 minutes)
  --full                add 1,000,000 accounts, and 1,000,000 accounts with 1,000,000 and with 10,000,000
                        stored orders, to the scaling (about 5 minutes more: seeding 10,000,000 orders takes about a minute)
  --runs N              measured runs of each figure (default 2; --quick 1)
  --duration S          seconds per measured run of the ceiling, order path, scenarios, peer (default 10; --quick 5)
  --warmup S            seconds of unmeasured load before them (default 3; --quick 2)
  --accounts N          accounts for the scenarios, the peer and the connection sweep (default 10000)
  --connections N       connections for the ceiling, scenarios and peer (default 64)
  --sweep LIST          connection counts for the chart (default 16,64,128,256)
  --sweep-duration S    seconds per connection count (default 8; --quick 4)
  --sizes LIST          scaling sizes: accounts with no stored orders (default 1000,100000; --full adds 1000000)
  --steps LIST          scaling steps with stored orders, accounts:orders, run after the sizes
                        (default 100000:1000000; --full 1000000:1000000,1000000:10000000; --quick none)
  --scaling-duration S  seconds of load per scaling size (default 5; --quick 4)
  --load-accounts N     most accounts the scaling load spreads over (default 100000)
  --touch-accounts N    accounts loaded with a balance request for the memory-per-wallet figure
                        (default 100000: fewer, and V8's step-wise heap growth swamps the figure)
  --quiet-wait S        before each measured run wait up to S s for other processes to go quiet (default 0)
  --quiet-below PCT     "quiet": the machine below PCT percent busy (default 10)
  --skip LIST           leave out some of: micro,order,mixed,idempotent,peer,sweep,scaling
  --no-write            do not touch bench/RESULTS.md and bench/throughput.svg
  --json FILE           also write every figure as JSON
  --from-json FILE      measure nothing: regenerate RESULTS.md and the chart from a --json file
`;

export const SECTIONS = ['micro', 'order', 'mixed', 'idempotent', 'peer', 'sweep', 'scaling'] as const;
export type Section = (typeof SECTIONS)[number];

export const TARGET_ORDERS = 25_000;
export const TARGET_P99 = 10;
/** The scaling target: orders/s at TARGET_SCALED ≥ TARGET_SCALED_RATIO × at TARGET_SCALED_BASE. */
export const TARGET_SCALED: ScalingPoint = { accounts: 1_000_000, orders: 10_000_000 };
export const TARGET_SCALED_BASE: ScalingPoint = { accounts: 1000, orders: 0 };
export const TARGET_SCALED_RATIO = 0.8;
export const QUANTITY = 1000;

export interface Options extends QuietOptions {
  quick: boolean;
  full: boolean;
  runs: number;
  duration: number;
  warmup: number;
  accounts: number;
  connections: number;
  sweep: number[];
  sweepDuration: number;
  sizes: number[];
  steps: ScalingPoint[];
  scalingDuration: number;
  loadAccounts: number;
  touchAccounts: number;
  skip: Set<Section>;
  write: boolean;
  json: string | null;
  fromJson: string | null;
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      accounts: { type: 'string', default: '10000' },
      connections: { type: 'string', default: '64' },
      sweep: { type: 'string', default: '16,64,128,256' },
      'sweep-duration': { type: 'string' },
      sizes: { type: 'string' },
      steps: { type: 'string' },
      'scaling-duration': { type: 'string' },
      'load-accounts': { type: 'string', default: '100000' },
      'touch-accounts': { type: 'string' },
      ...QUIET_OPTION_SPECS,
      skip: { type: 'string', default: '' },
      'no-write': { type: 'boolean', default: false },
      json: { type: 'string' },
      'from-json': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const quick = values.quick;
  const skip = new Set<Section>();
  for (const name of values.skip.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--skip: unknown section ${JSON.stringify(name)} (known: ${SECTIONS.join(', ')})`);
    skip.add(name as Section);
  }
  const sizes = values.sizes !== undefined ? intList('sizes', values.sizes) : [1000, 100_000, ...(values.full ? [1_000_000] : [])];
  const defaultSteps = values.full ? '1000000:1000000,1000000:10000000' : quick ? '' : '100000:1000000';
  const stepsText = values.steps ?? defaultSteps;
  const steps = stepsText === '' ? [] : pointList('steps', stepsText);
  return {
    quick,
    full: values.full,
    runs: positiveInt('runs', values.runs ?? (quick ? '1' : '2')),
    duration: positiveInt('duration', values.duration ?? (quick ? '5' : '10')),
    warmup: positiveInt('warmup', values.warmup ?? (quick ? '2' : '3'), 0),
    accounts: positiveInt('accounts', values.accounts),
    connections: positiveInt('connections', values.connections),
    sweep: intList('sweep', values.sweep),
    sweepDuration: positiveInt('sweep-duration', values['sweep-duration'] ?? (quick ? '4' : '8')),
    sizes,
    steps,
    scalingDuration: positiveInt('scaling-duration', values['scaling-duration'] ?? (quick ? '4' : '5')),
    loadAccounts: positiveInt('load-accounts', values['load-accounts']),
    touchAccounts: positiveInt('touch-accounts', values['touch-accounts'] ?? '100000', 0),
    ...quietOptions(values),
    skip,
    write: !values['no-write'],
    json: values.json ?? null,
    fromJson: values['from-json'] ?? null,
  };
}

