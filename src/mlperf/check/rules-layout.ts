// The clients of a run (Rules.md §6.3.3) and where they kept their data (§6.4.1, §6.5.2): the rank
// layout against run.json, each client at full load, each with its own results file and cache
// directory, the results directory shared at one path, results and cache on different file systems,
// and what a gateway or NFS mount would need recorded.
import { basename, dirname, resolve } from 'node:path';
import { MLPERF_OPTIONS } from '../options.js';
import { argOf, evidence, hostsOf, manifestEvidence, rankEvidence, ranksOf, relPath, verdictOf } from './facts.js';
import type { Finding } from './facts.js';
import { optionOfRank } from './rules-workload.js';
import type { CheckInput, Rule, Verdict } from './types.js';

const hostOf = (doc: { kvcache_bench: { ranks?: { host: string } | null } }): string => doc.kvcache_bench.ranks?.host ?? 'unknown';

function clientDefinition(input: CheckInput): Verdict {
  const m = input.manifest?.fields;
  const findings: Finding[] = [];
  const total = m?.total_ranks;
  const npernode = m?.npernode;
  const hostCount = m?.host_count;
  if (total === undefined || npernode === undefined || hostCount === undefined)
    findings.push({
      status: 'CANNOT TELL',
      evidence: manifestEvidence(input, 'total_ranks, npernode, host_count', [total, npernode, hostCount], 'all three recorded'),
    });
  else
    findings.push({
      status: total === npernode * hostCount ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(input, 'total_ranks', total, `npernode ${npernode} × host_count ${hostCount} = ${npernode * hostCount}`),
    });
  if (m?.hosts !== undefined && hostCount !== undefined)
    findings.push({
      status: m.hosts.length === hostCount ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(input, 'hosts', m.hosts, `${hostCount} host(s) (host_count)`),
    });
  for (const t of input.trials) {
    const trialDir = relPath(input, t.dir);
    for (const line of t.missing)
      findings.push({ status: 'FAIL', evidence: evidence(trialDir, 'rank file', line, 'a readable results file per rank') });
    if (total !== undefined && t.files.length + t.missing.length === 0)
      findings.push({ status: 'FAIL', evidence: evidence(trialDir, 'rank files', 0, `${total}`) });
    for (const f of t.files) {
      const world = f.doc.kvcache_bench.ranks?.world_size ?? 1;
      if (total !== undefined && world !== total)
        findings.push({
          status: 'FAIL',
          evidence: evidence(relPath(input, f.path), 'kvcache_bench.ranks.world_size', world, `${total} (total_ranks)`),
        });
    }
    const perHost = new Map<string, number>();
    for (const f of t.files) perHost.set(hostOf(f.doc), (perHost.get(hostOf(f.doc)) ?? 0) + 1);
    if (hostCount !== undefined && t.missing.length === 0 && perHost.size !== hostCount)
      findings.push({
        status: 'FAIL',
        evidence: evidence(trialDir, 'hosts of the rank files', [...perHost.keys()], `${hostCount} host(s)`),
      });
    if (npernode !== undefined && t.missing.length === 0)
      for (const [host, n] of perHost)
        if (n !== npernode)
          findings.push({ status: 'FAIL', evidence: evidence(trialDir, `ranks on host ${host}`, n, `${npernode} (npernode)`) });
  }
  const files = input.trials.reduce((n, t) => n + t.files.length, 0);
  if (!findings.some((f) => f.status === 'FAIL') && files > 0)
    findings.push({
      status: 'PASS',
      evidence: evidence(
        '.',
        'rank files',
        `${input.trials.length} trial(s), ${files} rank file(s) on ${hostsOf(ranksOf(input)).join(', ')}`,
        'every rank of every trial',
      ),
    });
  return verdictOf(findings, evidence('.', 'trials', 'none', 'trial directories with rank files'));
}

/** Each client ran the Option's full users and allocation limit: the same values on every rank, the Option's (or the OPEN override). */
function scaleUp(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  // Overrides count only in OPEN: a CLOSED run with one is 6.6.1's failure, and its clients still owe the Option's values.
  const overrides = input.division === 'open' ? input.manifest?.fields.sequence?.overrides : {};
  const findings: Finding[] = [];
  for (const key of ['num_users', 'max_concurrent_allocs'] as const) {
    const flag = key.replaceAll('_', '-');
    const byOption = new Map<string, typeof ranks>();
    for (const r of ranks) byOption.set(r.option, [...(byOption.get(r.option) ?? []), r]);
    for (const [option, rs] of byOption) {
      const id = optionOfRank(rs[0]);
      const optionValue =
        id === undefined ? undefined : MLPERF_OPTIONS[id].values[key === 'num_users' ? 'numUsers' : 'maxConcurrentAllocs'];
      // max-concurrent-allocs always comes from the Option (6.6.2); num-users may be an OPEN override.
      // An OPEN run may override num-users; when run.json does not record its overrides, the value the clients should run is unknown.
      const openUnknown = key === 'num_users' && input.division !== 'closed' && overrides === undefined;
      const want = openUnknown
        ? undefined
        : key === 'num_users' && overrides !== undefined && flag in overrides
          ? overrides[flag]
          : optionValue;
      const values = [...new Set(rs.map((r) => JSON.stringify(argOf(r.doc, key) ?? null)))];
      for (const r of rs.filter((x) => want !== undefined && argOf(x.doc, key) !== want))
        findings.push({
          status: 'FAIL',
          evidence: rankEvidence(input, r, `effective_config.args.${key}`, argOf(r.doc, key), `${String(want)} per client`),
        });
      if (values.length > 1)
        findings.push({
          status: 'FAIL',
          evidence: evidence(`option_${option}`, `effective_config.args.${key}`, values.join(', '), 'one value on every client'),
        });
      else if (want === undefined)
        findings.push({
          status: 'CANNOT TELL',
          evidence: evidence(
            `option_${option}`,
            `effective_config.args.${key}`,
            values[0],
            openUnknown ? 'the OPEN value (run.json records no overrides)' : 'the Option value (this trial is of no known Option)',
          ),
        });
      else if (!findings.some((f) => f.status === 'FAIL' && f.evidence.field.endsWith(key)))
        findings.push({
          status: 'PASS',
          evidence: evidence(
            `option_${option}`,
            `effective_config.args.${key}`,
            `${values[0]} on ${rs.length} rank file(s)`,
            `${String(want)} per client`,
          ),
        });
    }
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording num_users'));
}

/** No two clients of a trial share a results file or a cache directory; each sits under its own rank_<N>/. */
function isolation(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  for (const t of input.trials) {
    const outputs = new Map<string, number[]>();
    const caches = new Map<string, number[]>();
    for (const f of t.files) {
      const file = relPath(input, f.path);
      const recordedRank = f.doc.kvcache_bench.ranks?.rank ?? 0;
      if (recordedRank !== f.rank)
        findings.push({
          status: 'FAIL',
          evidence: evidence(file, 'kvcache_bench.ranks.rank', recordedRank, `${f.rank} (its directory rank_${f.rank})`),
        });
      const out = argOf(f.doc, 'output');
      if (typeof out === 'string') outputs.set(resolve(out), [...(outputs.get(resolve(out)) ?? []), f.rank]);
      const cache = argOf(f.doc, 'cache_dir');
      if (typeof cache !== 'string') {
        findings.push({
          status: 'CANNOT TELL',
          evidence: evidence(file, 'effective_config.args.cache_dir', cache, 'a cache directory of its own'),
        });
        continue;
      }
      // Directories of one name on two hosts are two directories: the host is part of the key.
      const key = `${hostOf(f.doc)}:${resolve(cache)}`;
      caches.set(key, [...(caches.get(key) ?? []), f.rank]);
      if (basename(cache) !== `rank_${f.rank}`)
        findings.push({
          status: 'FAIL',
          evidence: evidence(file, 'effective_config.args.cache_dir', cache, `<cache-dir>/rank_${f.rank}/`),
        });
    }
    const trialDir = relPath(input, t.dir);
    for (const [path, rs] of outputs)
      if (rs.length > 1)
        findings.push({
          status: 'FAIL',
          evidence: evidence(
            trialDir,
            'effective_config.args.output',
            `${path} shared by ranks ${rs.join(', ')}`,
            'one results file per rank',
          ),
        });
    for (const [key, rs] of caches)
      if (rs.length > 1)
        findings.push({
          status: 'FAIL',
          evidence: evidence(
            trialDir,
            'effective_config.args.cache_dir',
            `${key} shared by ranks ${rs.join(', ')}`,
            'one cache directory per rank',
          ),
        });
    if (t.files.length > 0 && !findings.some((f) => f.status === 'FAIL' && f.evidence.file.startsWith(trialDir)))
      findings.push({
        status: 'PASS',
        evidence: evidence(
          trialDir,
          'output, cache_dir',
          `${t.files.length} rank(s), ${outputs.size} results file(s), ${caches.size} cache dir(s)`,
          'one each per rank',
        ),
      });
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording output and cache_dir'));
}

/** Multi-host: every rank wrote its file under one results path (the same on every host), and the sequence's probe ran. */
function sharedResultsDir(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  for (const t of input.trials) {
    const bases = new Map<string, string[]>();
    for (const f of t.files) {
      const out = argOf(f.doc, 'output');
      const base = typeof out === 'string' ? dirname(dirname(resolve(out))) : '(not recorded)';
      bases.set(base, [...(bases.get(base) ?? []), hostOf(f.doc)]);
    }
    const trialDir = relPath(input, t.dir);
    findings.push({
      status: bases.size === 1 && !bases.has('(not recorded)') ? 'PASS' : bases.has('(not recorded)') ? 'CANNOT TELL' : 'FAIL',
      evidence: evidence(
        trialDir,
        'effective_config.args.output (trial directory)',
        [...bases].map(([b, hs]) => `${b} on ${[...new Set(hs)].join(', ')}`).join('; '),
        'one path on every host',
      ),
    });
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording output'));
}

/** Results and cache on different file systems: run.json's stat of both, and each rank's cache device beside it. */
function posixCacheDir(input: CheckInput): Verdict {
  const seq = input.manifest?.fields.sequence;
  const findings: Finding[] = [];
  const res = seq?.results_dir;
  const cache = seq?.cache_dir;
  if (res === undefined || cache === undefined || res.device_id === null || cache.device_id === null)
    findings.push({
      status: 'CANNOT TELL',
      evidence: manifestEvidence(
        input,
        'sequence.results_dir / cache_dir',
        undefined,
        'the file systems of both (recorded by kv-cache mlperf since this check)',
      ),
    });
  else
    findings.push({
      status: res.device_id !== cache.device_id ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(
        input,
        'sequence.results_dir / cache_dir',
        `results ${res.file_system ?? '?'} on ${res.block_device ?? `dev ${res.device_id}`}, cache ${cache.file_system ?? '?'} on ${cache.block_device ?? `dev ${cache.device_id}`}`,
        'different file systems',
      ),
    });
  // A rank on the launching host whose cache sat on the results dir's device measured its own results writes.
  const launch = seq?.launch_host;
  for (const r of ranksOf(input)) {
    const fs = r.doc.kvcache_bench.machine.cache_dir;
    if (fs === null) {
      findings.push({ status: 'FAIL', evidence: rankEvidence(input, r, 'machine.cache_dir', null, 'a cache directory (--cache-dir set)') });
      continue;
    }
    if (res?.block_device != null && launch === hostOf(r.doc) && fs.block_device === res.block_device)
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(
          input,
          r,
          'machine.cache_dir.block_device',
          fs.block_device,
          `not ${res.block_device} (the results dir's device)`,
        ),
      });
  }
  const seen = [
    ...new Set(
      ranksOf(input).map(
        (r) =>
          `${hostOf(r.doc)}: ${r.doc.kvcache_bench.machine.cache_dir?.file_system ?? '?'} on ${r.doc.kvcache_bench.machine.cache_dir?.block_device ?? '?'}`,
      ),
    ),
  ];
  if (seen.length > 0)
    findings.push({ status: 'PASS', evidence: evidence('.', 'machine.cache_dir (per host)', seen.join('; '), 'recorded by every rank') });
  return verdictOf(findings, evidence('.', 'machine.cache_dir', 'none', 'recorded'));
}

/** File systems reached through a gateway or network client: latency is at the POSIX boundary, and the client's set-up must be recorded. */
const GATEWAY_FS = /^(nfs|cifs|fuse)/;

function gatewayScope(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const behind = ranks.filter((r) => GATEWAY_FS.test(r.doc.kvcache_bench.machine.cache_dir?.file_system ?? ''));
  const kinds = [...new Set(ranks.map((r) => r.doc.kvcache_bench.machine.cache_dir?.file_system ?? 'none'))].join(', ');
  if (behind.length === 0)
    return {
      status: 'NOT APPLICABLE',
      evidence: [evidence('.', 'machine.cache_dir.file_system', kinds, 'nfs, cifs or fuse (a gateway) for this rule to apply')],
    };
  return {
    status: 'CANNOT TELL',
    evidence: behind.map((r) =>
      rankEvidence(
        input,
        r,
        'machine.cache_dir.file_system',
        r.doc.kvcache_bench.machine.cache_dir?.file_system,
        'gateway/client software, version and mount options recorded (kv-cache records the file system type only)',
      ),
    ),
  };
}

export const LAYOUT_RULES: readonly Rule[] = [
  {
    id: '6.3.3.1',
    name: 'kvcacheClientDefinition',
    appliesTo: ['run'],
    requirement: 'total ranks = npernode × hosts (run.json), and every trial holds that many rank files, npernode per host',
    evaluate: clientDefinition,
  },
  {
    id: '6.3.3.2',
    name: 'kvcacheScaleUpModel',
    appliesTo: ['any'],
    requirement: "every client ran the Option's full num-users (or the OPEN override) and its max-concurrent-allocs",
    evaluate: scaleUp,
  },
  {
    id: '6.3.3.3',
    name: 'kvcachePerClientIsolation',
    appliesTo: ['run', 'multi-rank'],
    requirement: 'no two ranks of a trial share a results file or a cache directory (<cache-dir>/rank_<N>/)',
    evaluate: isolation,
  },
  {
    id: '6.3.3.4',
    name: 'kvcacheSharedResultsDir',
    appliesTo: ['run', 'multi-host'],
    requirement: "every host's ranks wrote under one results path",
    evaluate: sharedResultsDir,
  },
  {
    id: '6.4.1',
    name: 'kvcachePosixCacheDir',
    appliesTo: ['run'],
    requirement: '--cache-dir and --results-dir set and on different file systems',
    evaluate: posixCacheDir,
  },
  {
    id: '6.5.2',
    name: 'kvcacheObjectLatencyScope',
    appliesTo: ['any'],
    requirement: 'a cache dir behind a gateway or NFS client records the client software and its configuration',
    evaluate: gatewayScope,
  },
];
