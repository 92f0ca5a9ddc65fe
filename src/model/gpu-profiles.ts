// Named GPU profiles for the prefill compute model (issue 23): peak dense BF16 tensor throughput
// from each vendor data sheet. Data sheets print the figure "with sparsity" first; the dense figure
// is half of it, and dense is what prefill runs. docs/ttft.md lists the sources.

export interface GpuProfile {
  /** The `--gpu-profile` value. */
  readonly key: string;
  readonly name: string;
  /** Peak dense BF16 tensor-core throughput of one GPU (TFLOP/s), from the data sheet. */
  readonly bf16DenseTflops: number;
  /** Where the figure comes from. */
  readonly source: string;
}

/** The profiles' keys, in --help order; `none` (no modelled TTFT) is the flag's extra choice. */
export const GPU_PROFILE_KEYS = ['a100', 'h100-sxm', 'h200', 'b200', 'l40s'] as const;
export type GpuProfileKey = (typeof GPU_PROFILE_KEYS)[number];

export const GPU_PROFILES: Readonly<Record<GpuProfileKey, GpuProfile>> = {
  a100: {
    key: 'a100',
    name: 'NVIDIA A100 SXM',
    bf16DenseTflops: 312,
    source: 'NVIDIA A100 Tensor Core GPU data sheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity)',
  },
  'h100-sxm': {
    key: 'h100-sxm',
    name: 'NVIDIA H100 SXM',
    bf16DenseTflops: 989,
    source: 'NVIDIA H100 Tensor Core GPU data sheet, H100 SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity (989 dense)',
  },
  h200: {
    key: 'h200',
    name: 'NVIDIA H200 SXM',
    bf16DenseTflops: 989,
    source: 'NVIDIA H200 Tensor Core GPU data sheet, H200 SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity (989 dense)',
  },
  b200: {
    key: 'b200',
    name: 'NVIDIA B200',
    bf16DenseTflops: 2250,
    source: 'NVIDIA DGX B200 / HGX B200 data sheet: FP16/BF16 Tensor Core 4.5 PFLOPS per GPU with sparsity (2.25 dense)',
  },
  l40s: {
    key: 'l40s',
    name: 'NVIDIA L40S',
    bf16DenseTflops: 362.05,
    source: 'NVIDIA L40S data sheet: BF16 Tensor Core 362.05 TFLOPS (733 with sparsity)',
  },
};

/** The profile of a `--gpu-profile` value; undefined for `none` or an unknown name. */
export function gpuProfileOf(key: string): GpuProfile | undefined {
  return (GPU_PROFILE_KEYS as readonly string[]).includes(key) ? GPU_PROFILES[key as GpuProfileKey] : undefined;
}
