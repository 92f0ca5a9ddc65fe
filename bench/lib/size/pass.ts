// bench:size's child for the sizing pass alone: `node dist/bench/lib/size/pass.js [--root DIR] RUN-FLAGS…`
// reads the flags as `kv-cache size` does and times sizeRun only (one server, no capacities), without
// Node's start-up, module loading, argument parsing or the outputs. --root names another built
// checkout whose dist/ to time (bench:size --baseline). Prints one JSON line: wall and CPU seconds
// (user + system, every thread) of the pass, block references.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type * as RunArgs from '../../../src/cli/run-args.js';
import type * as Sizing from '../../../src/engine/sizing.js';

const argv = process.argv.slice(2);
const rooted = argv[0] === '--root';
const dist = rooted ? join(argv[1] ?? '', 'dist') : join(import.meta.dirname, '../../..');
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dist, path)).href)) as T;
const { parseRunArgs } = await load<typeof RunArgs>('src/cli/run-args.js');
const { sizeRun } = await load<typeof Sizing>('src/engine/sizing.js');

const { config } = parseRunArgs(rooted ? argv.slice(2) : argv, new Date());
const cpu = process.cpuUsage();
const started = performance.now();
const outcome = await sizeRun(config, { capacities: [], servers: 1, route: 'round-robin', pools: [] });
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ seconds, cpuSeconds: (used.user + used.system) / 1e6, references: outcome.references }));
