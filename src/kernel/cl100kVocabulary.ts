/**
 * The `cl100k_base` rank table as three typed arrays, read once from the `.tiktoken` file that
 * `gpt-tokenizer` ships (`data/cl100k_base.tiktoken`: one `base64(token bytes) rank` per line,
 * the same 100,256 tokens as the library's JavaScript table; the tests check the counts against
 * the library's encoder).
 *
 * Why not the library's table: importing `gpt-tokenizer/bpeRanks/cl100k_base` makes a
 * JavaScript string and array per token, kept alive by the module, that every major garbage
 * collection walks. Here the table is three typed arrays outside the JavaScript heap (token
 * bytes, their offsets, an open-addressing hash), no per-token object (BENCHMARKS.md, memory).
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

export interface Vocabulary {
  /** every token's bytes, one after another, in rank order */
  readonly bytes: Uint8Array
  /** token `r` is `bytes[offsets[r] .. offsets[r + 1])` */
  readonly offsets: Int32Array
  /** rank + 1 at the hash slot of its bytes (0: empty), linear probing */
  readonly slots: Int32Array
  readonly size: number
}

/** Slots in the hash: a power of two, a little over twice the 100,256 tokens. */
const SLOT_BITS = 18
const MASK = (1 << SLOT_BITS) - 1
const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

const BASE64 = new Int8Array(128).fill(-1)
for (let i = 0; i < 64; i++) {
  BASE64["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i
}

/** Parses the `.tiktoken` text; ranks must be 0, 1, 2, ... in order, as in the shipped file. */
export const parseTiktoken = (file: Uint8Array): Vocabulary => {
  let lines = 0
  for (let i = 0; i < file.length; i++) if (file[i] === 10) lines += 1
  if (file.length > 0 && file[file.length - 1] !== 10) lines += 1
  const bytes = new Uint8Array(Math.ceil(file.length * 0.75))
  const offsets = new Int32Array(lines + 1)
  let size = 0
  let out = 0
  let at = 0
  while (at < file.length) {
    // base64 up to the space; the rank after it is checked, not trusted
    let bits = 0
    let count = 0
    for (; at < file.length && file[at] !== 32; at++) {
      const c = file[at]!
      if (c === 61) continue // "=" padding
      const v = c < 128 ? BASE64[c]! : -1
      if (v < 0) throw new Error(`cl100k_base.tiktoken: bad base64 at byte ${at}`)
      bits = (bits << 6) | v
      count += 6
      if (count >= 8) {
        count -= 8
        bytes[out++] = (bits >> count) & 0xff
      }
    }
    let rank = 0
    for (at += 1; at < file.length && file[at] !== 10; at++) rank = rank * 10 + (file[at]! - 48)
    at += 1
    if (rank !== size) throw new Error(`cl100k_base.tiktoken: rank ${rank} where ${size} was expected`)
    size += 1
    offsets[size] = out
  }
  const slots = new Int32Array(1 << SLOT_BITS)
  for (let r = 0; r < size; r++) {
    let h = FNV_OFFSET
    for (let i = offsets[r]!; i < offsets[r + 1]!; i++) h = Math.imul(h ^ bytes[i]!, FNV_PRIME)
    let slot = (h >>> 0) & MASK
    while (slots[slot] !== 0) slot = (slot + 1) & MASK
    slots[slot] = r + 1
  }
  return { bytes: bytes.slice(0, out), offsets: offsets.subarray(0, size + 1), slots, size }
}

let loaded: Vocabulary | undefined

/** The table, read on first use and kept. */
export const cl100k = (): Vocabulary => {
  if (loaded !== undefined) return loaded
  const path = createRequire(import.meta.url).resolve("gpt-tokenizer/data/cl100k_base.tiktoken")
  loaded = parseTiktoken(readFileSync(path))
  return loaded
}

const NONE = -1

/** The rank of the byte sequence `s` (char codes 0-255, one a byte), or -1. */
export const rankOfByteString = (v: Vocabulary, s: string): number => {
  let h = FNV_OFFSET
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME)
  for (let slot = (h >>> 0) & MASK;; slot = (slot + 1) & MASK) {
    const entry = v.slots[slot]!
    if (entry === 0) return NONE
    const start = v.offsets[entry - 1]!
    if (v.offsets[entry]! - start !== s.length) continue
    let i = 0
    while (i < s.length && v.bytes[start + i] === s.charCodeAt(i)) i++
    if (i === s.length) return entry - 1
  }
}

/** The rank of token `a`'s bytes followed by token `b`'s, or -1. */
export const rankOfJoin = (v: Vocabulary, a: number, b: number): number => {
  const { bytes, offsets } = v
  const a0 = offsets[a]!
  const a1 = offsets[a + 1]!
  const b0 = offsets[b]!
  const b1 = offsets[b + 1]!
  const length = a1 - a0 + b1 - b0
  let h = FNV_OFFSET
  for (let i = a0; i < a1; i++) h = Math.imul(h ^ bytes[i]!, FNV_PRIME)
  for (let i = b0; i < b1; i++) h = Math.imul(h ^ bytes[i]!, FNV_PRIME)
  for (let slot = (h >>> 0) & MASK;; slot = (slot + 1) & MASK) {
    const entry = v.slots[slot]!
    if (entry === 0) return NONE
    const start = offsets[entry - 1]!
    if (offsets[entry]! - start !== length) continue
    let i = 0
    while (i < a1 - a0 && bytes[start + i] === bytes[a0 + i]) i++
    if (i < a1 - a0) continue
    let j = 0
    while (j < b1 - b0 && bytes[start + i + j] === bytes[b0 + j]) j++
    if (j === b1 - b0) return entry - 1
  }
}
