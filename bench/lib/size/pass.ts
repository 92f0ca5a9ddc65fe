// bench:size's child for the sizing pass alone: `node dist/bench/lib/size/pass.js RUN-FLAGS…` reads the
// flags as `kv-cache size` does and times sizeRun only (one server, no capacities), without Node's
// start-up, module loading, argument parsing or the outputs. Prints one JSON line: wall and CPU seconds
// (user + system) of the pass, block references.
import { performance } from 'node:perf_hooks';
import { parseRunArgs } from '../../../src/cli/run-args.js';
import { sizeRun } from '../../../src/engine/sizing.js';

const { config } = parseRunArgs(process.argv.slice(2), new Date());
const cpu = process.cpuUsage();
const started = performance.now();
const outcome = await sizeRun(config, { capacities: [], servers: 1, route: 'round-robin', pools: [] });
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ seconds, cpuSeconds: (used.user + used.system) / 1e6, references: outcome.references }));
