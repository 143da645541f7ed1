/**
 * The paged KV cache as a pool of fixed-size blocks (vLLM `block_size`, 16 tokens by
 * default). Only counts are modelled: which block holds what does not matter without prefix
 * caching.
 */

/** Blocks needed to hold `tokens` tokens. */
export function blocksFor(tokens: number, blockSize: number): number {
  return Math.ceil(tokens / blockSize);
}

export class BlockPool {
  /** Total GPU blocks (vLLM `num_gpu_blocks`). */
  readonly totalBlocks: number;
  #used = 0;

  constructor(totalBlocks: number) {
    if (!Number.isInteger(totalBlocks) || totalBlocks < 1) {
      throw new RangeError(`Expected a positive integer number of KV blocks, got ${totalBlocks}`);
    }
    this.totalBlocks = totalBlocks;
  }

  /** Blocks currently allocated. */
  get usedBlocks(): number {
    return this.#used;
  }

  /** Blocks free to allocate. */
  get freeBlocks(): number {
    return this.totalBlocks - this.#used;
  }

  /** Used fraction, 0–1: what vLLM reports as `kv_cache_usage_perc`. */
  usage(): number {
    return this.#used / this.totalBlocks;
  }

  /** Allocates `n` blocks if that many are free. @returns whether it did */
  tryAllocate(n: number): boolean {
    if (n > this.totalBlocks - this.#used) return false;
    this.#used += n;
    return true;
  }

  /** Returns `n` blocks to the pool. */
  release(n: number): void {
    if (n > this.#used) throw new RangeError(`Releasing ${n} blocks but only ${this.#used} are used`);
    this.#used -= n;
  }

  /** Frees everything (engine restart). */
  reset(): void {
    this.#used = 0;
  }
}
