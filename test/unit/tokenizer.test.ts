/**
 * The packed cl100k table (src/kernel/cl100kVocabulary.ts) against the library's own: the
 * same token at every rank, and the same counts as the library's encoder on random text.
 */
import fc from "fast-check"
import RANKS from "gpt-tokenizer/bpeRanks/cl100k_base"
import { encode } from "gpt-tokenizer/encoding/cl100k_base"
import { CL100K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import { describe, expect, it } from "vitest"
import { cl100k, parseTiktoken, rankOfByteString, rankOfJoin } from "../../src/kernel/cl100kVocabulary.js"
import { countTokens, forEachPiece, MAX_PIECE_LENGTH, pieces } from "../../src/kernel/tokenizer.js"

const encoder = new TextEncoder()
const tokenBytes = (token: string | ReadonlyArray<number>): Uint8Array =>
  typeof token === "string" ? encoder.encode(token) : Uint8Array.from(token)
const byteString = (bytes: Uint8Array): string => String.fromCharCode(...bytes)
const libraryCount = (text: string) => encode(text, { disallowedSpecial: new Set() }).length

/**
 * U+FEFF is left out of the comparisons with the library: its bytes EF BB BF are one token
 * (rank 3305) in the `.tiktoken` file, but the library's encoder keys its table by decoded
 * text, and its decoder drops a byte order mark, so it never finds that token and counts 2.
 */
const BOM = "\uFEFF"

describe("the packed cl100k_base table", () => {
  it("holds the library's tokens, each at its rank", () => {
    const v = cl100k()
    expect(v.size).toBe(RANKS.length)
    RANKS.forEach((token, rank) => {
      // plain comparisons: 100,256 expect() calls take seconds
      const bytes = byteString(tokenBytes(token))
      if (byteString(v.bytes.subarray(v.offsets[rank]!, v.offsets[rank + 1]!)) !== bytes) {
        expect.fail(`token ${rank} differs`)
      }
      if (rankOfByteString(v, bytes) !== rank) expect.fail(`token ${rank} is not found at its rank`)
    })
  })

  it("finds a join of two tokens exactly when the joined bytes are a token", () => {
    const v = cl100k()
    const known = new Map<string, number>()
    RANKS.forEach((token, rank) => known.set(byteString(tokenBytes(token)), rank))
    const rank = fc.integer({ min: 0, max: RANKS.length - 1 })
    fc.assert(
      fc.property(rank, rank, (a, b) => {
        const joined = byteString(tokenBytes(RANKS[a]!)) + byteString(tokenBytes(RANKS[b]!))
        expect(rankOfJoin(v, a, b)).toBe(known.get(joined) ?? -1)
      }),
      { numRuns: 2000 }
    )
    // pairs that are tokens (a random pair rarely is): every token of two or more bytes split once
    for (let rank = 0; rank < RANKS.length; rank += 97) {
      const bytes = byteString(tokenBytes(RANKS[rank]!))
      for (let cut = 1; cut < bytes.length; cut++) {
        const a = known.get(bytes.slice(0, cut))
        const b = known.get(bytes.slice(cut))
        if (a !== undefined && b !== undefined) expect(rankOfJoin(v, a, b)).toBe(rank)
      }
    }
  })

  it("misses byte sequences that are not tokens", () => {
    const v = cl100k()
    expect(rankOfByteString(v, "")).toBe(-1)
    expect(rankOfByteString(v, "xqzjxqzjxqzj")).toBe(-1)
    expect(rankOfByteString(v, "hello")).toBe(15339)
  })

  it("refuses a file whose ranks are out of order", () => {
    expect(() => parseTiktoken(encoder.encode("IQ== 0\nIg== 2\n"))).toThrow(/rank 2 where 1/)
    expect(() => parseTiktoken(encoder.encode("I*== 0\n"))).toThrow(/bad base64/)
    expect(parseTiktoken(encoder.encode("IQ== 0\nIg== 1")).size).toBe(2)
  })
})

// Text made of real tokens (long merges), words, punctuation, digits, CJK, emoji and lone
// surrogates, so every path of the merge runs.
const fragment = fc.oneof(
  fc.integer({ min: 0, max: RANKS.length - 1 }).map((r) => {
    const t = RANKS[r]!
    return typeof t === "string" ? t : new TextDecoder().decode(Uint8Array.from(t))
  }),
  fc.constantFrom(
    " ",
    "\n",
    "\n\n",
    "  ",
    "\t",
    "'s",
    "'LL",
    "...",
    "“",
    "”",
    "1234567",
    "中文",
    "😀",
    "é",
    "\ud800",
    "=="
  ),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 8 })
)
const randomText = fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(""))

describe("countTokens against the library's encoder", () => {
  it("counts random text as encode(text).length does", () => {
    fc.assert(
      fc.property(randomText, (text) => {
        // a pre-token over MAX_PIECE_LENGTH units is merged in parts (tokenizer.ts): not comparable
        fc.pre(pieces(text).cut.every((c) => c === 0))
        fc.pre(!text.includes(BOM))
        expect(countTokens(text)).toBe(libraryCount(text))
      }),
      { numRuns: 1000 }
    )
  })

  it("counts a byte order mark as the .tiktoken file has it: one token (where the library counts two)", () => {
    const v = cl100k()
    expect(rankOfByteString(v, byteString(Uint8Array.of(0xef, 0xbb, 0xbf)))).toBe(3305)
    expect(countTokens(BOM)).toBe(1)
    expect(countTokens(`a${BOM}b`)).toBe(countTokens("a") + 1 + countTokens("b"))
  })

  it("counts prose and code as the library does", () => {
    const samples = [
      "The quick brown fox jumps over the lazy dog. ".repeat(20),
      "const x = await fetch(`https://example.com/${id}`)\n\tif (!x.ok) throw new Error(x.statusText)\n",
      "Alice Smith knows Bruno Novak; they met in Zürich in 2019 — über-café, naïve façade.",
      "東京都は日本の首都です。人口は約1400万人。",
      "🙂🙃 emoji 👩‍👩‍👧‍👦 families and flags 🇫🇷🇯🇵"
    ]
    for (const text of samples) expect(countTokens(text)).toBe(libraryCount(text))
  })
})

describe("forEachPiece", () => {
  // the pre-tokens as the library's regex finds them with matchAll, before long ones are cut
  const preTokens = (text: string) =>
    Array.from(
      text.matchAll(new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "gu")),
      (m) => [m.index, m.index + m[0].length]
    )
  const joinedCuts = (text: string) => {
    const found: Array<Array<number>> = []
    forEachPiece(text, (start, end, cut) => {
      const last = found[found.length - 1]
      if (cut && last !== undefined && last[1] === start && end - start <= MAX_PIECE_LENGTH) last[1] = end
      else found.push([start, end])
    })
    return found
  }

  it("finds the library regex's matches, in order, tiling the text", () => {
    fc.assert(
      fc.property(randomText, (text) => {
        fc.pre(pieces(text).cut.every((c) => c === 0))
        expect(joinedCuts(text)).toEqual(preTokens(text))
      }),
      { numRuns: 1000 }
    )
    for (const text of ["", " ", "\r\n\r\n  x", "a\uD800b", "\uDC00\uD800", "it's 12345 ok!!\n", "🙂 \u00A0\u2028x"]) {
      expect(joinedCuts(text)).toEqual(preTokens(text))
    }
  })

  it("stops when the callback says so", () => {
    const seen: Array<number> = []
    forEachPiece("one two three four", (start) => {
      seen.push(start)
      return seen.length < 2
    })
    expect(seen).toEqual([0, 3])
  })
})
