/**
 * Price and size grids (tick, lot). The model counts in integer grid steps and converts to a
 * decimal value only at the edge, as `count × units / 10^decimals`: one exact integer product and
 * one correctly rounded division, so 651234 ticks of 0.1 print as 65123.4 and never as
 * 65123.40000000001.
 */
import { decimalsOf } from '../../contracts/model-config.ts';

export { decimalsOf };

/** A grid of equally spaced positive values: a tick grid for prices or a lot grid for sizes. */
export class Grid {
  /** Grid step as a decimal value. */
  readonly step: number;
  /** 10^decimals of the step. */
  private readonly scale: number;
  /** The step in units of 1/scale (an integer). */
  private readonly units: number;

  constructor(step: number) {
    this.step = step;
    this.scale = Number(`1e${decimalsOf(step)}`);
    this.units = Math.round(step * this.scale);
  }

  /** The value of `count` grid steps. */
  value(count: number): number {
    return (count * this.units) / this.scale;
  }

  /** The value of `halfCount` half steps (mid prices sit on the half-tick grid). */
  halfValue(halfCount: number): number {
    return (halfCount * this.units) / (2 * this.scale);
  }

  /** Nearest whole number of steps to a value. */
  nearest(value: number): number {
    return Math.round(value / this.step);
  }
}
