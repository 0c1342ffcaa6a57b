/**
 * Lambda's CPU is a share of a core: it allocates CPU in proportion to memory, the equivalent
 * of one vCPU at 1,769 MB (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
 * A benchmark on a full core understates a smaller function's CPU time by 1,769 ÷ its memory.
 */

/** The memory size with the equivalent of one vCPU. */
export const ONE_VCPU_MB = 1769;

/** The function's share of one core at `memoryMb` (1 from 1,769 MB on; more cores do not speed one thread). */
export function cpuShare(memoryMb: number): number {
  return Math.min(1, memoryMb / ONE_VCPU_MB);
}

/** A request's latency at `memoryMb`: its CPU part slowed by the function's share of a core, its waiting part as measured. */
export function projectedMs(wallMs: number, cpuMs: number, memoryMb: number): number {
  return wallMs - cpuMs + cpuMs / cpuShare(memoryMb);
}
