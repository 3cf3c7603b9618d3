/**
 * Splitting a long text into overlapping chunks (spec/contracts.md section 4). Pure.
 *
 * A text of at most `chunkSize` tokens is one chunk. Otherwise each chunk has at most
 * `chunkSize` tokens and, from the second on, starts inside the previous one so that the two
 * share at most `overlapTarget` tokens (about half to all of it when the text allows). A chunk
 * ends, in order of preference, at the start of a paragraph (after a blank line), of a sentence
 * (after . ! ? and the like, a line break, or CJK 。！？), of a word, and only if the window
 * has none of those, at the last token boundary that fits (inside a run with no break, at the
 * last code point that fits). A boundary must keep at least half of what the chunk can still
 * take after its overlap; the overlap starts at a boundary of the same kinds. Offsets are UTF-16
 * indexes into the text, `end_offset` exclusive, never inside a surrogate pair.
 *
 * The text is tokenized once (see tokenizer.ts); boundaries are found on prefix sums of piece
 * counts, then each chunk and overlap is counted exactly, re-encoding only its edges.
 */
import { countRange, fitsInTokens, pieceAt, pieces, splitsSurrogatePair } from "../kernel/tokenizer.js"

export interface Chunk {
  readonly index: number
  readonly text: string
  readonly tokens: number
  /** tokens of this chunk's text that repeat the end of the previous chunk; 0 for the first */
  readonly overlap_tokens: number
  readonly start_offset: number
  readonly end_offset: number
}

export interface ChunkOptions {
  readonly chunkSize: number
  readonly overlapPercent: number
}

/** A hard cut goes inside a piece of more tokens than this rather than stop before it. */
const LARGE_PIECE = 8

/** Below this a single code point (up to 4 tokens) plus an overlap might not fit. */
export const MIN_CHUNK_SIZE = 8
export const MAX_OVERLAP_PERCENT = 50

/** The overlap aimed at between consecutive chunks, in tokens. */
export const overlapTarget = (options: ChunkOptions): number =>
  Math.round((options.chunkSize * options.overlapPercent) / 100)

/** Whether a text is longer than one chunk (then it is a document); cheap for a long text. */
export const needsChunking = (text: string, chunkSize: number): boolean => !fitsInTokens(text, chunkSize)

const validate = (options: ChunkOptions): void => {
  if (!Number.isInteger(options.chunkSize) || options.chunkSize < MIN_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer >= ${MIN_CHUNK_SIZE}, got ${options.chunkSize}`)
  }
  if (!(options.overlapPercent >= 0 && options.overlapPercent <= MAX_OVERLAP_PERCENT)) {
    throw new RangeError(`overlapPercent must be between 0 and ${MAX_OVERLAP_PERCENT}, got ${options.overlapPercent}`)
  }
}

/** Candidate boundaries: offsets where a chunk may end (and the next begin), by kind, sorted. */
interface Boundaries {
  readonly paragraph: ReadonlyArray<number>
  readonly sentence: ReadonlyArray<number>
  readonly word: ReadonlyArray<number>
}

// A whitespace run; or CJK sentence ends / clause marks glued to the next character.
const BREAKS = /(\s+)|([。！？｡]+[」』）】〕”’]*)(?=\S)|([，、；：]+)(?=\S)/gu
const SENTENCE_END = /[.!?…‼⁇⁈⁉。！？｡][)\]}"'”’»」』）]*$/u
const BLANK_LINE = /\n[^\n]*\n|\u2029/

const boundaries = (text: string): Boundaries => {
  const paragraph: Array<number> = []
  const sentence: Array<number> = []
  const word: Array<number> = []
  for (const m of text.matchAll(BREAKS)) {
    const at = m.index + m[0].length
    if (at >= text.length || at === 0) continue
    if (m[2] !== undefined) {
      sentence.push(at)
    } else if (m[3] !== undefined) {
      word.push(at)
    } else if (BLANK_LINE.test(m[1]!)) {
      paragraph.push(at)
    } else if (m[1]!.includes("\n") || SENTENCE_END.test(text.slice(Math.max(0, m.index - 4), m.index))) {
      sentence.push(at)
    } else {
      word.push(at)
    }
  }
  return { paragraph, sentence, word }
}

/** The last element of sorted `xs` in [lo, hi], if any. */
const lastIn = (xs: ReadonlyArray<number>, lo: number, hi: number): number | undefined => {
  let a = 0
  let b = xs.length
  while (a < b) {
    const mid = (a + b) >>> 1
    if (xs[mid]! <= hi) a = mid + 1
    else b = mid
  }
  const x = xs[a - 1]
  return x !== undefined && x >= lo ? x : undefined
}

/** The first element of sorted `xs` in [lo, hi], if any. */
const firstIn = (xs: ReadonlyArray<number>, lo: number, hi: number): number | undefined => {
  let a = 0
  let b = xs.length
  while (a < b) {
    const mid = (a + b) >>> 1
    if (xs[mid]! < lo) a = mid + 1
    else b = mid
  }
  const x = xs[a]
  return x !== undefined && x <= hi ? x : undefined
}

/** The largest j in [lo, hi] with ok(j), ok being true then false over the range; lo - 1 if none. */
const lastTrue = (lo: number, hi: number, ok: (j: number) => boolean): number => {
  let a = lo - 1
  let b = hi
  while (a < b) {
    const mid = (a + b + 1) >>> 1
    if (ok(mid)) a = mid
    else b = mid - 1
  }
  return a
}

/** The smallest j in [lo, hi] with ok(j), ok being false then true over the range; hi + 1 if none. */
const firstTrue = (lo: number, hi: number, ok: (j: number) => boolean): number => {
  let a = lo
  let b = hi + 1
  while (a < b) {
    const mid = (a + b) >>> 1
    if (ok(mid)) b = mid
    else a = mid + 1
  }
  return a
}

/** The code point boundaries strictly inside (from, to). */
const codePointsIn = (text: string, from: number, to: number): Array<number> => {
  const out: Array<number> = []
  for (let at = from + 1; at < to; at++) if (!splitsSurrogatePair(text, at)) out.push(at)
  return out
}

const nextCodePoint = (text: string, at: number): number => (splitsSurrogatePair(text, at + 1) ? at + 2 : at + 1)

// A hard cut right before one of these, or right after a zero-width joiner, splits what a
// reader sees as one character (accents, emoji modifiers and sequences, tag characters).
const JOINING = /^[\p{M}\u200d\ufe0e\ufe0f\u{1f3fb}-\u{1f3ff}\u{e0020}-\u{e007f}]/u
const joins = (text: string, at: number): boolean =>
  JOINING.test(text.slice(at, at + 2)) || text.charCodeAt(at - 1) === 0x200d

/** Moves a hard cut off a joined sequence, toward `bound` (back for an end, forward for a start), if it stays strictly before/after it. */
const soften = (text: string, at: number, bound: number): number => {
  let cut = at
  const step = bound < at ? -1 : 1
  const inside = (x: number) => (step < 0 ? x > bound : x < bound)
  while (inside(cut) && joins(text, cut)) {
    cut += step
    if (splitsSurrogatePair(text, cut)) cut += step
  }
  return inside(cut) ? cut : at
}

export const chunkText = (text: string, options: ChunkOptions): ReadonlyArray<Chunk> => {
  validate(options)
  const size = options.chunkSize
  const p = pieces(text)
  const n = text.length
  const total = p.before[p.count]!
  if (total <= size) {
    return [{ index: 0, text, tokens: total, overlap_tokens: 0, start_offset: 0, end_offset: n }]
  }
  const target = Math.min(overlapTarget(options), Math.floor(size / 2))
  const kinds = boundaries(text)
  const byPreference = [kinds.paragraph, kinds.sentence, kinds.word]
  const { starts, before, cut } = p

  /** The end of the chunk at `start` for `budget` tokens; past `floor` (the previous chunk's end). */
  const chooseEnd = (start: number, floor: number, overlap: number, budget: number): number => {
    // tokens of [start, starts[j]) for j >= first: the partial piece at `start`, then whole pieces
    const at = pieceAt(p, start)
    const first = starts[at] === start ? at : at + 1
    const head = first === at ? 0 : countRange(p, start, starts[first]!)
    const upTo = (j: number) => head + before[j]! - before[first]!
    const j = lastTrue(first, p.count, (k) => upTo(k) <= budget)
    if (j === p.count) return n
    // the hard limit: the last piece boundary that fits (`start` itself if none does, j being
    // the piece that holds it), then further inside piece j if it is large (a part of an
    // unbroken run, a long run of symbols) or if nothing past `floor` fits otherwise
    let limit = j >= first ? starts[j]! : start
    if (cut[j] === 1 || before[j + 1]! - before[j]! > LARGE_PIECE || limit <= floor) {
      const base = j >= first ? upTo(j) : 0
      const points = codePointsIn(text, limit, starts[j + 1]!)
      const k = lastTrue(0, points.length - 1, (q) => base + countRange(p, limit, points[q]!) <= budget)
      if (k >= 0) limit = points[k]!
    }
    if (limit <= floor) return nextCodePoint(text, floor)
    limit = soften(text, limit, Math.max(start, floor))
    // a nicer boundary must keep at least half of what the budget leaves after the overlap; it
    // may lie inside piece j (a word starts after the space that opens the piece)
    const need = (budget + overlap) / 2
    const enough = firstTrue(first, j, (k) => upTo(k) >= need)
    const lo = Math.max(enough <= j ? starts[enough]! : limit, floor + 1)
    const hi = Math.max(limit, starts[j + 1]! - 1)
    const fits = (c: number) => {
      if (c <= limit) return true
      const k = pieceAt(p, c)
      return (k < first ? countRange(p, start, c) : upTo(k) + countRange(p, starts[k]!, c)) <= budget
    }
    for (const kind of byPreference) {
      let found = lastIn(kind, lo, hi)
      while (found !== undefined && !fits(found)) found = lastIn(kind, lo, found - 1)
      if (found !== undefined) return found
    }
    return limit
  }

  /** The end of the chunk at `start` and its exact tokens; undefined if its overlap leaves no room. */
  const pickEnd = (start: number, floor: number, overlap: number) => {
    let budget = size
    for (;;) {
      const end = chooseEnd(start, floor, overlap, budget)
      const tokens = countRange(p, start, end)
      if (tokens <= size) return { end, tokens }
      if (end === nextCodePoint(text, floor)) return undefined
      budget -= tokens - size
    }
  }

  /** Where the chunk after [start, end) starts: inside it, sharing at most `target` tokens. */
  const pickStart = (start: number, end: number): { readonly start: number; readonly overlap: number } => {
    const none = { start: end, overlap: 0 }
    if (target === 0) return none
    // tokens of [starts[j], end) for j <= last: whole pieces, then the partial piece at `end`
    const e = pieceAt(p, end - 1)
    const last = starts[e + 1] === end ? e + 1 : e
    const tail = last === e + 1 ? 0 : countRange(p, starts[e]!, end)
    const from = (j: number) => before[last]! - before[j]! + tail
    const first = pieceAt(p, start) + 1
    // the earliest piece boundary after `start` within the target, and the last one at half of it
    const hi = firstTrue(first, last, (j) => from(j) <= target)
    const lo = lastTrue(hi, last, (j) => from(j) * 2 >= target)
    let begin = hi <= last ? starts[hi]! : end
    // nicer boundaries are looked for from inside the piece before `hi` to the end of the piece
    // after `lo`, each checked against the target
    const tokensFrom = (c: number) => {
      const k = pieceAt(p, c)
      if (starts[k] === c) return from(k)
      return k >= last ? countRange(p, c, end) : countRange(p, c, starts[k + 1]!) + from(k + 1)
    }
    const windowStart = Math.max(start + 1, hi > 0 ? starts[hi - 1]! + 1 : 0)
    const after = Math.max(lo, hi) + 1
    const windowEnd = after <= last ? starts[after]! - 1 : end - 1
    let nice: number | undefined
    for (const kind of byPreference) {
      nice = firstIn(kind, windowStart, windowEnd)
      while (nice !== undefined && tokensFrom(nice) > target) nice = firstIn(kind, nice + 1, windowEnd)
      if (nice !== undefined) break
    }
    if (nice !== undefined) {
      begin = nice
    } else if (lo >= hi) {
      begin = soften(text, begin, end)
    } else {
      // no piece boundary shares even half the target (large pieces, such as the parts of an
      // unbroken run): start inside the piece before `hi`, as early as the target allows. A
      // piece boundary is preferred when it will do: the next chunk's pieces then line up with
      // the text's, whose counts are reused.
      const runEnd = hi <= last ? starts[hi]! : end
      const base = hi <= last ? from(hi) : 0
      const points = codePointsIn(text, Math.max(starts[hi - 1]!, start), runEnd)
      const k = firstTrue(0, points.length - 1, (q) => base + countRange(p, points[q]!, runEnd) <= target)
      if (k < points.length) begin = soften(text, points[k]!, runEnd)
    }
    if (begin <= start || begin >= end) return none
    let overlap = countRange(p, begin, end)
    while (overlap > target) {
      begin = starts[pieceAt(p, begin) + 1]!
      if (begin >= end) return none
      overlap = countRange(p, begin, end)
    }
    return { start: begin, overlap }
  }

  const chunks: Array<Chunk> = []
  let start = 0
  let floor = 0
  let overlap = 0
  for (;;) {
    let picked = pickEnd(start, floor, overlap)
    if (picked === undefined) {
      // the overlap left no room for new text: start where the previous chunk ended
      start = floor
      overlap = 0
      picked = pickEnd(start, floor, overlap)!
    }
    chunks.push({
      index: chunks.length,
      text: text.slice(start, picked.end),
      tokens: picked.tokens,
      overlap_tokens: overlap,
      start_offset: start,
      end_offset: picked.end
    })
    if (picked.end >= n) return chunks
    const next = pickStart(start, picked.end)
    floor = picked.end
    start = next.start
    overlap = next.overlap
  }
}
