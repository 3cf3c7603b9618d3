/**
 * The one token counter of the project: OpenAI's `cl100k_base` BPE, as implemented by the
 * pure-JavaScript `gpt-tokenizer` package (pinned 4.0.0; its vocabulary ships inside the package,
 * so nothing is downloaded at run time). `cl100k_base` is the encoding of text-embedding-3-small,
 * the model that embeds every chunk verbatim, so a chunk's count is what the embeddings API
 * counts for it. This file is the only importer of the library, so it can be swapped here.
 *
 * The text is split into pre-tokens by the encoding's own split pattern, then each pre-token is
 * byte-pair encoded on its own, as the library does. One deliberate difference: the library's
 * merge is quadratic in the length of a pre-token, and a run with no break in it (1 MiB of CJK
 * without punctuation, a long line of `=`, ten thousand newlines) is a single pre-token, which
 * would take minutes. So a pre-token longer than MAX_PIECE_LENGTH UTF-16 units is cut every
 * MAX_PIECE_LENGTH units (never between the two halves of a surrogate pair) before encoding.
 * Ordinary text never has such runs, and then the count is exactly the library's.
 */
import { countTokens as libraryCount } from "gpt-tokenizer/encoding/cl100k_base"
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"

export const TOKENIZER = { library: "gpt-tokenizer", version: "4.0.0", encoding: "cl100k_base" } as const

/** The longest piece handed to the library's merge, in UTF-16 units. */
export const MAX_PIECE_LENGTH = 128

// Special-token strings such as "<|endoftext|>" in a user's text are plain text, never an error.
const SPECIAL_AS_TEXT = { disallowedSpecial: new Set<string>() }

// Our own copy: matchAll starts from a regex's lastIndex, and the library's instance is shared.
const SPLIT = new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "gu")

// A pre-token longer than MAX_PIECE_LENGTH needs a run of at least this many letters, or of
// other non-space symbols, or of whitespace (a piece is at most a run of one class, or a space,
// a symbol run and a newline run); a text without one can go to the library whole.
const RUN = Math.floor((MAX_PIECE_LENGTH - 1) / 2)
const LONG_RUN = new RegExp(`\\p{L}{${RUN},}|[^\\s\\p{L}\\p{N}]{${RUN},}|\\s{${RUN},}`, "u")

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Whether `offset` falls between the two halves of a surrogate pair of `text`. */
export const splitsSurrogatePair = (text: string, offset: number): boolean =>
  offset > 0 && offset < text.length && isHigh(text.charCodeAt(offset - 1)) && isLow(text.charCodeAt(offset))

// Short pieces repeat a lot ("the", ",", "\n\n"); the library call costs more than a lookup.
const memo = new Map<string, number>()
const MEMO_LIMIT = 200_000
const MEMO_PIECE = 24

/** The tokens of one piece (at most MAX_PIECE_LENGTH units). */
const pieceTokens = (piece: string): number => {
  if (piece.length > MEMO_PIECE) return libraryCount(piece, SPECIAL_AS_TEXT)
  const known = memo.get(piece)
  if (known !== undefined) return known
  const tokens = libraryCount(piece, SPECIAL_AS_TEXT)
  if (memo.size >= MEMO_LIMIT) memo.clear()
  memo.set(piece, tokens)
  return tokens
}

/**
 * Calls `f(start, end, cut)` for each piece of `text` in order: a pre-token, or a part of a long
 * one (`cut` true). The pieces tile the text.
 */
export const forEachPiece = (text: string, f: (start: number, end: number, cut: boolean) => void): void => {
  for (const match of text.matchAll(SPLIT)) {
    const start = match.index
    const end = start + match[0].length
    if (end - start <= MAX_PIECE_LENGTH) {
      f(start, end, false)
      continue
    }
    let from = start
    while (from < end) {
      let to = Math.min(from + MAX_PIECE_LENGTH, end)
      if (splitsSurrogatePair(text, to)) to -= 1
      f(from, to, true)
      from = to
    }
  }
}

/** The number of tokens of `text`. */
export const countTokens = (text: string): number => {
  if (text.length === 0) return 0
  if (!LONG_RUN.test(text)) return libraryCount(text, SPECIAL_AS_TEXT)
  let total = 0
  forEachPiece(text, (start, end) => {
    total += pieceTokens(text.slice(start, end))
  })
  return total
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
  return { text, count, starts: starts.subarray(0, count + 1), before: before.subarray(0, count + 1), cut }
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
