/**
 * The one token counter of the project: OpenAI's `cl100k_base` BPE with the vocabulary and the
 * pre-tokenizer pattern of the pure-JavaScript `gpt-tokenizer` package (pinned 4.0.0; the ranks
 * ship inside the package, nothing is downloaded at run time; we read them from its
 * `.tiktoken` file into typed arrays, see cl100kVocabulary.ts). `cl100k_base` is the encoding of
 * text-embedding-3-small, the model that embeds every chunk verbatim, so a chunk's count is what
 * the embeddings API counts for it. This file and cl100kVocabulary.ts are the only users of the
 * library.
 *
 * The text is split into pre-tokens by the encoding's pattern and each pre-token is byte-pair
 * merged on its own, as tiktoken does. Two deliberate departures from calling the library's
 * `countTokens`, which the tests use as the oracle:
 * - the merge is ours (a dozen lines over the same rank table): the library's decodes
 *   every candidate pair back to a string, too slow for a long text it has not seen before
 *   (BENCHMARKS.md, long documents);
 * - a pre-token longer than MAX_PIECE_LENGTH UTF-16 units is merged in parts of that length
 *   (never splitting a surrogate pair): a merge is quadratic in its length, and a run with no
 *   break (CJK without punctuation, a long line of `=`) is a single pre-token.
 *   Ordinary text has no such runs, and then the count is exactly the library's.
 */
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import { cl100k, rankOfByteString, rankOfJoin, type Vocabulary as Cl100k } from "./cl100kVocabulary.js"

export const TOKENIZER = { library: "gpt-tokenizer", version: "4.0.0", encoding: "cl100k_base" } as const

/** The longest piece handed to the merge, in UTF-16 units. */
export const MAX_PIECE_LENGTH = 128

// Our own copies: they are used through lastIndex, and the library's instance is shared. The
// sticky one finds where the piece at a position ends without allocating a match (the pieces
// tile any text, so it always matches); the global one is the fallback should it not.
const SPLIT = new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "gu")
const SPLIT_AT = new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "uy")

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Whether `offset` falls between the two halves of a surrogate pair of `text`. */
export const splitsSurrogatePair = (text: string, offset: number): boolean =>
  offset > 0 && offset < text.length && isHigh(text.charCodeAt(offset - 1)) && isLow(text.charCodeAt(offset))

/**
 * The UTF-8 bytes of `s` as a string of char codes 0-255 (a lone surrogate becomes U+FFFD, as
 * TextEncoder does): a cheap Map key for a byte sequence.
 */
const utf8 = (s: string): string => {
  let ascii = true
  for (let i = 0; i < s.length && ascii; i++) ascii = s.charCodeAt(i) < 0x80
  if (ascii) return s
  let out = ""
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i)
    if (c < 0x80) {
      out += String.fromCharCode(c)
    } else if (c < 0x800) {
      out += String.fromCharCode(0xc0 | (c >> 6), 0x80 | (c & 63))
    } else if (isHigh(c) && isLow(s.charCodeAt(i + 1))) {
      const cp = ((c - 0xd800) << 10) + (s.charCodeAt(i + 1) - 0xdc00) + 0x10000
      i += 1
      out += String.fromCharCode(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63))
    } else {
      if (isHigh(c) || isLow(c)) c = 0xfffd
      out += String.fromCharCode(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
    }
  }
  return out
}

const NONE = 0x7fffffff

interface Vocabulary {
  readonly table: Cl100k
  /** the rank of each single byte */
  readonly byteRanks: Int32Array
  /** the rank of two bytes joined, at 256 * first + second (NONE if not a token) */
  readonly bytePairs: Int32Array
}

// Built on first use from the packed table (cl100kVocabulary.ts).
let vocabulary: Vocabulary | undefined
const vocab = (): Vocabulary => {
  if (vocabulary !== undefined) return vocabulary
  const table = cl100k()
  const byteRanks = new Int32Array(256)
  const bytePairs = new Int32Array(65536)
  for (let a = 0; a < 256; a++) {
    byteRanks[a] = rankOfByteString(table, String.fromCharCode(a))
    for (let b = 0; b < 256; b++) {
      const rank = rankOfByteString(table, String.fromCharCode(a, b))
      bytePairs[a * 256 + b] = rank < 0 ? NONE : rank
    }
  }
  vocabulary = { table, byteRanks, bytePairs }
  return vocabulary
}

// The rank of two tokens joined, memoized in an open-addressing table (cleared when half full):
// a merge asks for the same few pairs again and again.
const PAIR_BITS = 18
const PAIR_SLOTS = 1 << PAIR_BITS
const pairFirst = new Int32Array(PAIR_SLOTS).fill(-1)
const pairSecond = new Int32Array(PAIR_SLOTS)
const pairRank = new Int32Array(PAIR_SLOTS)
let pairsUsed = 0
const slotOf = (a: number, b: number) => (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> (32 - PAIR_BITS)

const joinedRank = (v: Vocabulary, a: number, b: number): number => {
  let slot = slotOf(a, b)
  for (;;) {
    const first = pairFirst[slot]!
    if (first === -1) break
    if (first === a && pairSecond[slot] === b) return pairRank[slot]!
    slot = (slot + 1) & (PAIR_SLOTS - 1)
  }
  const found = rankOfJoin(v.table, a, b)
  const rank = found < 0 ? NONE : found
  if (pairsUsed >= PAIR_SLOTS / 2) {
    pairFirst.fill(-1)
    pairsUsed = 0
    slot = slotOf(a, b)
  }
  pairFirst[slot] = a
  pairSecond[slot] = b
  pairRank[slot] = rank
  pairsUsed += 1
  return rank
}

// Scratch for one merge: a piece is at most 128 UTF-16 units, so at most 384 bytes.
const parts = new Int32Array(4 * MAX_PIECE_LENGTH)
const pairs = new Int32Array(4 * MAX_PIECE_LENGTH)

/**
 * The number of tokens of one piece: tiktoken's byte-pair merge (repeatedly join the adjacent
 * two parts whose joined bytes have the lowest rank, the leftmost on a tie) over the library's
 * ranks. Every part is a token, so a join's rank is looked up from the two parts' ranks.
 */
const mergeCount = (piece: string): number => {
  const v = vocab()
  const bytes = utf8(piece)
  let m = bytes.length
  if (m <= 1 || rankOfByteString(v.table, bytes) >= 0) return 1
  for (let i = 0; i < m; i++) parts[i] = v.byteRanks[bytes.charCodeAt(i)]!
  for (let i = 0; i < m - 1; i++) pairs[i] = v.bytePairs[bytes.charCodeAt(i) * 256 + bytes.charCodeAt(i + 1)]!
  for (;;) {
    let lowest = NONE
    let at = -1
    for (let i = 0; i < m - 1; i++) {
      if (pairs[i]! < lowest) {
        lowest = pairs[i]!
        at = i
      }
    }
    if (at < 0) return m
    // parts at and at + 1 become one, of rank `lowest`
    parts[at] = lowest
    for (let i = at + 1; i < m - 1; i++) parts[i] = parts[i + 1]!
    for (let i = at; i < m - 2; i++) pairs[i] = pairs[i + 1]!
    m -= 1
    if (at < m - 1) pairs[at] = joinedRank(v, parts[at]!, parts[at + 1]!)
    if (at > 0) pairs[at - 1] = joinedRank(v, parts[at - 1]!, parts[at]!)
  }
}

// Short pieces repeat a lot ("the", ",", "\n\n"); a lookup is cheaper than a merge.
const memo = new Map<string, number>()
const MEMO_LIMIT = 100_000
const MEMO_PIECE = 24

/** The tokens of one piece (at most MAX_PIECE_LENGTH units). */
const pieceTokens = (piece: string): number => {
  if (piece.length > MEMO_PIECE) return mergeCount(piece)
  const known = memo.get(piece)
  if (known !== undefined) return known
  const tokens = mergeCount(piece)
  if (memo.size >= MEMO_LIMIT) memo.clear()
  memo.set(piece, tokens)
  return tokens
}

/**
 * Calls `f(start, end, cut)` for each piece of `text` in order, until it returns false: a
 * pre-token, or a part of a long one (`cut` true). The pieces tile the text.
 */
export const forEachPiece = (text: string, f: (start: number, end: number, cut: boolean) => boolean | void): void => {
  let at = 0
  while (at < text.length) {
    let start = at
    SPLIT_AT.lastIndex = at
    if (!SPLIT_AT.test(text)) {
      // as matchAll would: the next match, skipping what matches nothing
      SPLIT.lastIndex = at
      const match = SPLIT.exec(text)
      if (match === null) return
      start = match.index
      SPLIT_AT.lastIndex = start + match[0].length
    }
    const end = SPLIT_AT.lastIndex
    // an empty match (none of the pattern's branches makes one) moves on by a code point
    at = end > start ? end : end + (isHigh(text.charCodeAt(end)) && isLow(text.charCodeAt(end + 1)) ? 2 : 1)
    if (end - start <= MAX_PIECE_LENGTH) {
      if (f(start, end, false) === false) return
      continue
    }
    let from = start
    while (from < end) {
      let to = Math.min(from + MAX_PIECE_LENGTH, end)
      if (splitsSurrogatePair(text, to)) to -= 1
      if (f(from, to, true) === false) return
      from = to
    }
  }
}

/** The number of tokens of `text`. */
export const countTokens = (text: string): number => {
  let total = 0
  forEachPiece(text, (start, end) => {
    total += pieceTokens(text.slice(start, end))
  })
  return total
}

/** Whether `text` has at most `limit` tokens; stops counting past the limit, so a long text costs little. */
export const fitsInTokens = (text: string, limit: number): boolean => {
  let total = 0
  forEachPiece(text, (start, end) => {
    total += pieceTokens(text.slice(start, end))
    return total <= limit
  })
  return total <= limit
}

/**
 * A text cut into its pieces, with their token counts as prefix sums: piece `i` is
 * `text.slice(starts[i], starts[i + 1])` and has `before[i + 1] - before[i]` tokens;
 * `starts[count] === text.length` and `before[count]` is `countTokens(text)`.
 */
export interface Pieces {
  readonly text: string
  readonly count: number
  readonly starts: Int32Array
  readonly before: Int32Array
  /** 1 where the piece is a part of a pre-token longer than MAX_PIECE_LENGTH */
  readonly cut: Uint8Array
}

export const pieces = (text: string): Pieces => {
  const starts = new Int32Array(text.length + 1)
  const before = new Int32Array(text.length + 1)
  const cut = new Uint8Array(text.length)
  let count = 0
  forEachPiece(text, (start, end, isCut) => {
    starts[count] = start
    cut[count] = isCut ? 1 : 0
    before[count + 1] = before[count]! + pieceTokens(text.slice(start, end))
    count += 1
  })
  starts[count] = text.length
  return {
    text,
    count,
    starts: starts.subarray(0, count + 1),
    before: before.subarray(0, count + 1),
    cut: cut.subarray(0, count)
  }
}

/** The index of the piece that contains `offset` (the last piece for `offset === text.length`). */
export const pieceAt = (p: Pieces, offset: number): number => {
  let lo = 0
  let hi = p.count - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (p.starts[mid]! <= offset) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * Exactly `countTokens(p.text.slice(start, end))`, reusing the counts of the pieces that the
 * slice shares with the whole text, so only its edges are encoded again.
 */
export const countRange = (p: Pieces, start: number, end: number): number => {
  if (start >= end) return 0
  const slice = p.text.slice(start, end)
  let i = pieceAt(p, start)
  let total = 0
  forEachPiece(slice, (from, to) => {
    const a = from + start
    while (i < p.count && p.starts[i]! < a) i += 1
    total += i < p.count && p.starts[i] === a && p.starts[i + 1] === to + start
      ? p.before[i + 1]! - p.before[i]!
      : pieceTokens(slice.slice(from, to))
  })
  return total
}
