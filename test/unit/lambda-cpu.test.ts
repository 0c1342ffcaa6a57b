import { describe, expect, it } from 'vitest';
import { cpuShare, projectedMs } from '../../bench/lambda-cpu.js';

describe('the latency projected at a Lambda memory size', () => {
  it('stretches only the CPU part, by 1,769 ÷ memory', () => {
    // 63 ms of which 53 ms CPU at 512 MB: 10 ms waiting + 53 × 1769 / 512.
    expect(projectedMs(63, 53, 512)).toBeCloseTo(10 + (53 * 1769) / 512, 6);
    expect(projectedMs(63, 0, 512)).toBe(63);
  });

  it('gives no more than one core from 1,769 MB on', () => {
    expect(cpuShare(1769)).toBe(1);
    expect(cpuShare(3538)).toBe(1);
    expect(projectedMs(63, 53, 3538)).toBe(63);
  });
});
