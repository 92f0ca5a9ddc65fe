import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectRank } from '../../src/engine/ranks.js';

test('each launcher’s rank and world size are read from its variables', () => {
  assert.deepEqual(detectRank({ OMPI_COMM_WORLD_RANK: '2', OMPI_COMM_WORLD_SIZE: '3' }), {
    kind: 'rank',
    identity: { rank: 2, worldSize: 3, launcher: 'openmpi', worldSizeFrom: 'OMPI_COMM_WORLD_SIZE' },
  });
  assert.deepEqual(detectRank({ PMI_RANK: '0', PMI_SIZE: '4' }), {
    kind: 'rank',
    identity: { rank: 0, worldSize: 4, launcher: 'pmi', worldSizeFrom: 'PMI_SIZE' },
  });
  assert.deepEqual(detectRank({ SLURM_PROCID: '5', SLURM_NTASKS: '8' }), {
    kind: 'rank',
    identity: { rank: 5, worldSize: 8, launcher: 'slurm', worldSizeFrom: 'SLURM_NTASKS' },
  });
  assert.deepEqual(detectRank({ JOB_COMPLETION_INDEX: '1' }, 4), {
    kind: 'rank',
    identity: { rank: 1, worldSize: 4, launcher: 'kubernetes', worldSizeFrom: '--world-size' },
  });
});

test('Open MPI wins over the PMI and Slurm variables a launcher may also set', () => {
  const found = detectRank({
    SLURM_PROCID: '0',
    SLURM_NTASKS: '1',
    PMI_RANK: '1',
    PMI_SIZE: '2',
    OMPI_COMM_WORLD_RANK: '3',
    OMPI_COMM_WORLD_SIZE: '4',
  });
  assert.equal(found.kind === 'rank' && found.identity.launcher, 'openmpi');
});

test('no launcher is no rank; bad or incomplete variables are one clear problem', () => {
  assert.deepEqual(detectRank({}), { kind: 'none' });
  assert.deepEqual(detectRank({ JOB_COMPLETION_INDEX: '0' }), {
    kind: 'problem',
    message: 'JOB_COMPLETION_INDEX is set but the world size is unknown: pass --world-size N (the number of ranks, the job’s completions)',
  });
  assert.deepEqual(detectRank({ PMI_RANK: 'x', PMI_SIZE: '2' }), {
    kind: 'problem',
    message: "PMI_RANK='x' is not a non-negative integer",
  });
  assert.deepEqual(detectRank({ PMI_RANK: '2', PMI_SIZE: '2' }), {
    kind: 'problem',
    message: 'PMI_RANK=2 is not below the world size 2 (from PMI_SIZE)',
  });
  assert.deepEqual(detectRank({}, 3), {
    kind: 'problem',
    message:
      "--world-size 3 needs a launcher's rank variable (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, JOB_COMPLETION_INDEX); none is set",
  });
});
