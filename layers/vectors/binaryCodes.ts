/**
 * Binary codes for a coarse vector search: a fixed random rotation (random signs, then a
 * Walsh-Hadamard transform on the vector zero-padded to a power of two), then one bit per
 * rotated coordinate, its sign. The Hamming distance of two codes then estimates the angle
 * of the two vectors (each bit differs with probability angle / pi), whatever their shape:
 * without the rotation, sparse vectors (e.g. hashed features) get codes of mostly zeros and
 * the Hamming order is poor (BENCHMARKS.md, notes moved out of the code).
 *
 * The signs and the bit layout are part of the stored data: changing them invalidates every
 * stored code (bump CODES_VERSION, which names the table, so a new one is backfilled).
 */

export const CODES_VERSION = 1

/** Bits per code for `dimensions`: the dimensions rounded up to 64 bits, at most the padded size. */
export const codeBits = (dimensions: number): number =>
  Math.min(paddedSize(dimensions), Math.ceil(dimensions / 64) * 64)

const paddedSize = (dimensions: number): number => {
  let size = 1
  while (size < dimensions) size *= 2
  return Math.max(size, 64)
}

/** 32-bit FNV-1a, for signs that never change across platforms and versions (the hash embeddings of tests use it too). */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

const signsCache = new Map<number, Float32Array>()
const signsFor = (size: number): Float32Array => {
  let signs = signsCache.get(size)
  if (signs === undefined) {
    signs = new Float32Array(size)
    for (let i = 0; i < size; i++) signs[i] = fnv1a(`sign-${i}`) & 1 ? 1 : -1
    signsCache.set(size, signs)
  }
  return signs
}

/** The code of `values` (as many numbers as the store's dimensions): codeBits / 8 bytes. */
export const binaryCode = (values: ArrayLike<number>, dimensions: number): Buffer => {
  const size = paddedSize(dimensions)
  const signs = signsFor(size)
  const a = new Float32Array(size)
  for (let i = 0; i < values.length; i++) a[i] = values[i]! * signs[i]!
  for (let h = 1; h < size; h *= 2) {
    for (let i = 0; i < size; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const x = a[j]!
        const y = a[j + h]!
        a[j] = x + y
        a[j + h] = x - y
      }
    }
  }
  const bits = codeBits(dimensions)
  const code = Buffer.alloc(bits / 8)
  for (let i = 0; i < bits; i++) if (a[i]! > 0) code[i >> 3]! |= 1 << (i & 7)
  return code
}
