/**
 * The chunker's figures:
 * `npx tsx scripts/bench-chunking.ts [--size 1024] [--overlap 20] [--runs 5] [--library]`.
 *
 * Chunks 1 MiB (UTF-8) texts, generated deterministically, at chunk_size 1024 and 20 % overlap,
 * and prints for each kind of text the median time of `chunkText` and of `countTokens`, in ms
 * and MB/s, with the number of chunks. Every timed run is on a text of its own (the tokenizer
 * caches the pieces it has seen), after one warm-up run of the same kind. The texts: English-like
 * prose in paragraphs; prose with all its whitespace removed; Chinese prose with its
 * punctuation; and a worst case, 1 MiB of random lowercase letters with no break at all (one
 * pre-token, merged in parts by the tokenizer). With --library, also the time of the library's
 * own `countTokens` on one fresh text of each kind but the last (what counting would cost with
 * the library's merge).
 */
import { countTokens as libraryCount } from "gpt-tokenizer/encoding/cl100k_base"
import { countTokens } from "../src/kernel/tokenizer.js"
import { chunkText } from "../src/pipeline/chunking.js"

// the first count builds the rank tables
const loadStart = performance.now()
countTokens("warm")
const loadMs = performance.now() - loadStart

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const SIZE = Number(arg("size", "1024"))
const OVERLAP = Number(arg("overlap", "20"))
const RUNS = Number(arg("runs", "5"))
const LIBRARY = process.argv.includes("--library")
const MIB = 1 << 20

// A small deterministic generator, so every run measures the same texts.
let seed = 42
const random = () => {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!

const COMMON = (
  "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you " +
  "were her she there one all we their been has when who will more no if out so said what up its about into than them can"
).split(" ")
const SYLLABLES = [
  "ka",
  "to",
  "ri",
  "men",
  "sa",
  "lo",
  "ver",
  "an",
  "tion",
  "al",
  "ex",
  "pre",
  "con",
  "de",
  "ing",
  "er",
  "ly",
  "ous",
  "struct",
  "graph"
]
const NAMES = ["Berlin", "Alice", "Paris", "Acme Corp", "Dr. Okafor", "the Board", "Q3 2024", "Mount Kenya", "NASA"]

const word = () => {
  const r = random()
  if (r < 0.55) return pick(COMMON)
  if (r < 0.62) return pick(NAMES)
  if (r < 0.65) return String(Math.floor(random() * 3000))
  return Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(SYLLABLES)).join("")
}
const sentence = () => {
  const words = Array.from({ length: 6 + Math.floor(random() * 20) }, word)
  const first = words[0]!
  words[0] = first[0]!.toUpperCase() + first.slice(1)
  for (let i = 2; i < words.length - 1; i += 5 + Math.floor(random() * 6)) words[i] += ","
  return words.join(" ") + pick([".", ".", ".", "?", "!"])
}
const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const fill = (make: () => string): string => {
  const parts: Array<string> = []
  let size = 0
  while (size < MIB) {
    const part = make()
    parts.push(part)
    size += bytes(part)
  }
  const text = parts.join("")
  // cut to 1 MiB of UTF-8 at a code point boundary
  return Buffer.from(text, "utf8").subarray(0, MIB).toString("utf8").replace(/\uFFFD$/u, "")
}

const paragraph = () => Array.from({ length: 2 + Math.floor(random() * 6) }, sentence).join(" ") + "\n\n"
const HAN = [
  ..."的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"
]
const chinese = () => {
  const clauses = Array.from(
    { length: 2 + Math.floor(random() * 4) },
    () => Array.from({ length: 4 + Math.floor(random() * 12) }, () => pick(HAN)).join("")
  )
  return clauses.join("，") + pick(["。", "。", "？", "！"]) + (random() < 0.15 ? "\n\n" : "")
}
const letters = () => Array.from({ length: 1000 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("")

// Each timed run gets texts of its own: the tokenizer caches the pieces it has seen, and a
// repeated text would measure the caches.
// The library is not timed on the run: it merges it as one pre-token, which took 9.4 minutes.
const KINDS = [
  ["prose", () => fill(paragraph), true],
  ["prose without whitespace", () => fill(() => sentence().replace(/\s+/gu, "")), true],
  ["Chinese prose", () => fill(chinese), true],
  ["letters, no break (worst case)", () => fill(letters), false]
] as const

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const time = (f: () => unknown): number => {
  const t0 = performance.now()
  f()
  return performance.now() - t0
}

const rows: Array<Record<string, string | number>> = []
const options = { chunkSize: SIZE, overlapPercent: OVERLAP }
for (const [name, make, timeLibrary] of KINDS) {
  chunkText(make(), options) // warm-up: compiles the code paths of this kind of text
  const runs = Array.from({ length: RUNS }, () => {
    const [forCount, forChunks] = [make(), make()]
    const countMs = time(() => countTokens(forCount))
    let chunks: ReadonlyArray<unknown> = []
    const chunkMs = time(() => {
      chunks = chunkText(forChunks, options)
    })
    return { countMs, chunkMs, chunks: chunks.length, tokens: countTokens(forChunks), mb: bytes(forChunks) / 1e6 }
  })
  const chunkMs = median(runs.map((r) => r.chunkMs))
  const countMs = median(runs.map((r) => r.countMs))
  const mb = runs[0]!.mb
  rows.push({
    text: name,
    "MB (UTF-8)": Number(mb.toFixed(3)),
    tokens: runs[0]!.tokens,
    chunks: runs[0]!.chunks,
    "chunkText ms": Math.round(chunkMs),
    "chunkText MB/s": Number((mb / (chunkMs / 1000)).toFixed(1)),
    "countTokens ms": Math.round(countMs),
    "countTokens MB/s": Number((mb / (countMs / 1000)).toFixed(1)),
    ...(LIBRARY
      ? {
        "library countTokens ms": timeLibrary
          ? Math.round(time(() => libraryCount(make(), { disallowedSpecial: new Set() })))
          : "minutes"
      }
      : {})
  })
}
console.log(`chunk_size ${SIZE}, overlap ${OVERLAP} %, median of ${RUNS} runs on fresh texts, Node ${process.version}`)
console.log(`first count (builds the rank tables): ${Math.round(loadMs)} ms`)
console.table(rows)
