import { describe, expect, it } from "vitest"
import {
  countTokens,
  fitsInTokens,
  MAX_PIECE_LENGTH,
  pieces,
  splitsSurrogatePair,
  TOKENIZER
} from "../../src/kernel/tokenizer.js"
import { type Chunk, chunkText, needsChunking, overlapTarget } from "../../src/pipeline/chunking.js"

// Deterministic prose: the same text on every run.
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const WORDS = (
  "the of and to in a is that for it was with be by on not this are from at which have an they were her " +
  "Berlin Alice river company report morning station market garden theory engine window"
).split(" ")
const makeWriter = (seed: number) => {
  const random = prng(seed)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(random() * xs.length)]!
  const sentence = (words = 6 + Math.floor(random() * 14)) => {
    const ws = Array.from({ length: words }, () => pick(WORDS))
    return ws[0]![0]!.toUpperCase() + ws.join(" ").slice(1) + pick([".", ".", "?", "!"])
  }
  const paragraph = (sentences = 3 + Math.floor(random() * 4)) =>
    Array.from({ length: sentences }, () => sentence()).join(" ")
  return { random, sentence, paragraph }
}

const interior = (chunks: ReadonlyArray<Chunk>) => chunks.slice(0, -1)

describe("countTokens (cl100k_base)", () => {
  it("says which tokenizer it is", () => {
    expect(TOKENIZER).toEqual({ library: "gpt-tokenizer", version: "4.0.0", encoding: "cl100k_base" })
  })

  it("gives the known cl100k_base counts", () => {
    expect(countTokens("")).toBe(0)
    expect(countTokens("hello world")).toBe(2)
    // OpenAI's cookbook: [83, 1609, 5963, 374, 2294, 0]
    expect(countTokens("tiktoken is great!")).toBe(6)
    expect(countTokens("antidisestablishmentarianism")).toBe(6)
    expect(countTokens("中文")).toBe(2)
    expect(countTokens("😀")).toBe(2)
  })

  it("counts special-token strings as plain text", () => {
    expect(countTokens("<|endoftext|>")).toBe(7)
  })

  it("merges a pre-token longer than the piece limit in parts of that length", () => {
    const run = "中".repeat(10_000)
    const p = pieces(run)
    expect(p.count).toBe(Math.ceil(10_000 / MAX_PIECE_LENGTH))
    expect([...p.cut].every((c) => c === 1)).toBe(true)
    const full = Math.floor(10_000 / MAX_PIECE_LENGTH)
    expect(countTokens(run)).toBe(
      full * countTokens("中".repeat(MAX_PIECE_LENGTH)) + countTokens("中".repeat(10_000 - full * MAX_PIECE_LENGTH))
    )
  })

  it("never cuts a long run between the halves of a surrogate pair", () => {
    const run = "a" + "😀".repeat(300)
    const p = pieces(run)
    expect(p.count).toBeGreaterThan(1)
    for (const start of p.starts) expect(splitsSurrogatePair(run, start)).toBe(false)
  })

  it("tells whether a text fits a limit", () => {
    expect(fitsInTokens("hello world", 2)).toBe(true)
    expect(fitsInTokens("hello world", 1)).toBe(false)
    expect(fitsInTokens("", 0)).toBe(true)
  })
})

describe("chunkText: texts that fit", () => {
  // "a" then " a" n - 1 times: one token each
  const aTimes = (n: number) => "a" + " a".repeat(n - 1)

  it("does not chunk a text of exactly chunk_size tokens, and chunks one more", () => {
    const text = aTimes(64)
    expect(countTokens(text)).toBe(64)
    expect(needsChunking(text, 64)).toBe(false)
    expect(chunkText(text, { chunkSize: 64, overlapPercent: 20 })).toEqual([
      { index: 0, text, tokens: 64, overlap_tokens: 0, start_offset: 0, end_offset: text.length }
    ])
    const longer = aTimes(65)
    expect(needsChunking(longer, 64)).toBe(true)
    expect(chunkText(longer, { chunkSize: 64, overlapPercent: 20 }).length).toBe(2)
  })

  it("returns the empty text as one empty chunk", () => {
    expect(chunkText("", { chunkSize: 64, overlapPercent: 20 })).toEqual([
      { index: 0, text: "", tokens: 0, overlap_tokens: 0, start_offset: 0, end_offset: 0 }
    ])
  })

  it("rejects options outside the configured ranges", () => {
    const text = "some text"
    expect(() => chunkText(text, { chunkSize: 7, overlapPercent: 20 })).toThrow(RangeError)
    expect(() => chunkText(text, { chunkSize: 64.5, overlapPercent: 20 })).toThrow(RangeError)
    expect(() => chunkText(text, { chunkSize: 64, overlapPercent: -1 })).toThrow(RangeError)
    expect(() => chunkText(text, { chunkSize: 64, overlapPercent: 51 })).toThrow(RangeError)
    expect(() => chunkText(text, { chunkSize: 64, overlapPercent: Number.NaN })).toThrow(RangeError)
  })

  it("aims the overlap at overlap_percent of chunk_size", () => {
    expect(overlapTarget({ chunkSize: 1024, overlapPercent: 20 })).toBe(205)
    expect(overlapTarget({ chunkSize: 1024, overlapPercent: 0 })).toBe(0)
  })
})

describe("chunkText: boundaries", () => {
  it("ends chunks at paragraph breaks", () => {
    const { paragraph } = makeWriter(1)
    const text = Array.from({ length: 40 }, () => paragraph()).join("\n\n")
    for (const overlapPercent of [0, 20]) {
      const chunks = chunkText(text, { chunkSize: 300, overlapPercent })
      expect(chunks.length).toBeGreaterThan(5)
      for (const chunk of interior(chunks)) {
        expect(chunk.text.endsWith("\n\n")).toBe(true)
        expect(chunk.tokens).toBeGreaterThanOrEqual(150)
      }
    }
    // without overlap each chunk is whole paragraphs
    for (const chunk of chunkText(text, { chunkSize: 300, overlapPercent: 0 }).slice(1)) {
      expect(text.slice(chunk.start_offset - 2, chunk.start_offset)).toBe("\n\n")
    }
  })

  it("ends and starts chunks at sentence ends inside a long paragraph", () => {
    const { paragraph } = makeWriter(2)
    const text = paragraph(200)
    const chunks = chunkText(text, { chunkSize: 100, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of interior(chunks)) expect(chunk.text).toMatch(/[.?!] $/)
    // a chunk starts at a sentence when one starts within the overlap window, else at a word
    const starts = chunks.slice(1).map((chunk) => text.slice(chunk.start_offset - 2, chunk.start_offset))
    for (const before of starts) expect(before).toMatch(/ $/)
    expect(starts.filter((before) => /^[.?!] $/.test(before)).length).toBeGreaterThan(starts.length / 2)
  })

  it("ends chunks between words when there is no sentence end", () => {
    const { random } = makeWriter(3)
    const text = Array.from({ length: 3000 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ")
    const chunks = chunkText(text, { chunkSize: 50, overlapPercent: 20 })
    for (const chunk of interior(chunks)) {
      expect(chunk.text.endsWith(" ")).toBe(true)
      expect(text[chunk.end_offset]).not.toBe(" ")
    }
    for (const chunk of chunks.slice(1)) expect(text[chunk.start_offset - 1]).toBe(" ")
  })

  it("cuts a text with no whitespace at token boundaries, keeping chunks nearly full", () => {
    const { paragraph } = makeWriter(4)
    const text = paragraph(150).replace(/\s+/g, "")
    expect(text).not.toMatch(/\s/)
    const chunks = chunkText(text, { chunkSize: 64, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of interior(chunks)) {
      expect(chunk.tokens).toBeLessThanOrEqual(64)
      expect(chunk.tokens).toBeGreaterThanOrEqual(56)
    }
  })

  it("cuts an unbroken run of letters inside it, and still overlaps", () => {
    const text = "abcdefghijklmnopqrstuvwxyz".repeat(400)
    const chunks = chunkText(text, { chunkSize: 100, overlapPercent: 20 })
    for (const chunk of interior(chunks)) expect(chunk.tokens).toBeGreaterThanOrEqual(95)
    for (const chunk of chunks.slice(1)) {
      expect(chunk.overlap_tokens).toBeGreaterThanOrEqual(10)
      expect(chunk.overlap_tokens).toBeLessThanOrEqual(20)
    }
  })

  it("chunks CJK text at 。", () => {
    const text = "今天天气很好。我们去公园散步，看到了很多花。".repeat(60)
    const chunks = chunkText(text, { chunkSize: 64, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of interior(chunks)) expect(chunk.text.endsWith("。")).toBe(true)
    for (const chunk of chunks.slice(1)) expect(text[chunk.start_offset - 1]).toBe("。")
  })

  it("never splits a surrogate pair in a run of emoji", () => {
    const text = "😀".repeat(5000)
    const chunks = chunkText(text, { chunkSize: 50, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of chunks) {
      expect(chunk.text.length % 2).toBe(0)
      expect(chunk.start_offset % 2).toBe(0)
      expect(chunk.tokens).toBeLessThanOrEqual(50)
    }
    for (const chunk of chunks.slice(1)) expect(chunk.overlap_tokens).toBeGreaterThan(0)
  })

  it("does not cut joined emoji apart at a hard cut", () => {
    const text = "👨‍👩‍👧👍🏽".repeat(400)
    const chunks = chunkText(text, { chunkSize: 40, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of chunks) {
      expect(chunk.text).not.toMatch(/^[\u200d\u{1f3fb}-\u{1f3ff}]/u)
      expect(chunk.text).not.toMatch(/\u200d$/u)
    }
  })
})

describe("chunkText: overlap", () => {
  const { paragraph } = makeWriter(5)
  const text = Array.from({ length: 150 }, () => paragraph()).join("\n\n")

  it("overlaps consecutive chunks by half to all of overlap_percent of chunk_size", () => {
    const chunks = chunkText(text, { chunkSize: 1024, overlapPercent: 20 })
    expect(chunks.length).toBeGreaterThan(5)
    expect(chunks[0]!.overlap_tokens).toBe(0)
    chunks.slice(1).forEach((chunk) => {
      expect(chunk.start_offset).toBeLessThan(chunks[chunk.index - 1]!.end_offset)
      expect(chunk.overlap_tokens).toBeGreaterThanOrEqual(103)
      expect(chunk.overlap_tokens).toBeLessThanOrEqual(205)
    })
  })

  it("shares nothing at 0 % and up to half the chunk at 50 %", () => {
    const none = chunkText(text, { chunkSize: 200, overlapPercent: 0 })
    none.slice(1).forEach((chunk) => {
      expect(chunk.start_offset).toBe(none[chunk.index - 1]!.end_offset)
      expect(chunk.overlap_tokens).toBe(0)
    })
    const half = chunkText(text, { chunkSize: 200, overlapPercent: 50 })
    half.slice(1).forEach((chunk) => {
      expect(chunk.overlap_tokens).toBeGreaterThanOrEqual(50)
      expect(chunk.overlap_tokens).toBeLessThanOrEqual(100)
    })
    expect(half.length).toBeGreaterThan(none.length)
  })
})
