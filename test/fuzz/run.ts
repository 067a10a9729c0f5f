/**
 * `npm run fuzz -- [--count N] [--seed S] [--targets a,b] [--json FILE]`:
 * the fuzz suite from the command line. Exits 1 when any input was not
 * classified, nodelet crashed or hung, or something was written outside the roots.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatReport, type TargetName } from './outcome.ts';
import { passed, runFuzz, SHARES } from './fuzz.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    seed: { type: 'string' },
    targets: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(`usage: npm run fuzz -- [--count N] [--seed S] [--targets ${Object.keys(SHARES).join(',')}] [--json FILE]`);
  process.exit(0);
}
const seed = values.seed ? Number(values.seed) : Math.floor(Math.random() * 1e6);
const targets = values.targets?.split(',') as TargetName[] | undefined;
for (const t of targets ?? []) if (!(t in SHARES)) throw new Error(`unknown target ${t}; known: ${Object.keys(SHARES).join(', ')}`);
const report = await runFuzz({ seed, count: Number(values.count), targets, progress: (l) => console.log(l) });
console.log(formatReport(report));
if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
process.exit(passed(report) ? 0 : 1);
