/**
 * The bench's texts, generated deterministically (a seeded generator over small vocabularies),
 * in the language of `layers/testing/FactSentenceModel.ts`: fact sentences among prose the fake
 * model ignores.
 */
import { countTokens } from "../../src/kernel/tokenizer.js"
import { chunkText } from "../../src/pipeline/chunking.js"

/** The server's defaults (the bench runs on an empty gligabao.toml). */
export const CHUNKING = { chunkSize: 1024, overlapPercent: 20 } as const

export type Random = () => number

export const makeRandom = (seed: number): Random => {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return x / 2 ** 32
  }
}

const pick = <A>(r: Random, items: ReadonlyArray<A>): A => items[Math.floor(r() * items.length)]!

const FIRST = [
  "Alice",
  "Bruno",
  "Carla",
  "Dmitri",
  "Emma",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "Jonas",
  "Kemal",
  "Lena",
  "Maya",
  "Nils",
  "Olga",
  "Pedro",
  "Quinn",
  "Rosa",
  "Sami",
  "Tara"
]
const LAST = [
  "Smith",
  "Novak",
  "Okafor",
  "Tanaka",
  "Garcia",
  "Mueller",
  "Rossi",
  "Haddad",
  "Larsen",
  "Kowalski",
  "Silva",
  "Chen",
  "Dubois",
  "Ivanova",
  "Moreau"
]
const ORGS = [
  "Acme Labs",
  "Globex Bank",
  "Initech Foods",
  "Umbrella Motors",
  "Hooli Studios",
  "Vandelay Energy",
  "Stark Robotics",
  "Wayne Press",
  "Cyberdyne Systems",
  "Tyrell Works"
]
const CITIES = [
  "Berlin",
  "Paris",
  "Lagos",
  "Tokyo",
  "Lima",
  "Oslo",
  "Cairo",
  "Quito",
  "Seoul",
  "Perth",
  "Porto",
  "Riga"
]

// Prose the fake model ignores: no sentence has a relation word after a capitalized one.
const PROSE = [
  "The committee met again on the question of the harbour.",
  "Minutes record a long discussion of the tides, the cranes and the cost of dredging.",
  "Several members asked for the figures of the previous spring to be read out once more.",
  "It rained for most of the afternoon, and the meeting ran well past its planned end.",
  "A short note at the bottom of the page mentions the ships expected before the winter.",
  "Nobody could agree on whether the old warehouse should be repaired or pulled down.",
  "The treasurer read a long list of invoices, most of them for timber and rope.",
  "Later that week the matter came up again, this time with maps spread over the table."
]

/** `n` distinct people, the same for the same `seed`. */
export const people = (n: number, seed = 1): Array<string> => {
  const all = FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`))
  const r = makeRandom(seed)
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1))
    ;[all[i], all[j]] = [all[j]!, all[i]!]
  }
  if (n > all.length) throw new Error(`at most ${all.length} people`)
  return all.slice(0, n)
}

/** One fact sentence about the given people (a relation to another one, a place or an organization). */
export const factSentence = (r: Random, cast: ReadonlyArray<string>): string => {
  const source = pick(r, cast)
  const relation = pick(r, ["knows", "works at", "lives in", "visited", "founded"] as const)
  let target: string
  if (relation === "knows") {
    do target = pick(r, cast)
    while (target === source && cast.length > 1)
  } else target = relation === "lives in" || relation === "visited" ? pick(r, CITIES) : pick(r, ORGS)
  const year = r() < 0.6 ? ` in ${2000 + Math.floor(r() * 25)}` : ""
  return `${source} ${relation} ${target}${year}.`
}

/** A paragraph: `facts` fact sentences among `prose` sentences of prose. */
export const paragraph = (r: Random, cast: ReadonlyArray<string>, facts = 2, prose = 4): string => {
  const sentences = [
    ...Array.from({ length: facts }, () => factSentence(r, cast)),
    ...Array.from({ length: prose }, () => pick(r, PROSE))
  ]
  for (let i = sentences.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1))
    ;[sentences[i], sentences[j]] = [sentences[j]!, sentences[i]!]
  }
  return sentences.join(" ")
}

/** Paragraphs until the text has at least `tokens` tokens. */
export const textOfTokens = (tokens: number, seed: number, cast: ReadonlyArray<string>): string => {
  const r = makeRandom(seed)
  const parts: Array<string> = []
  let total = 0
  while (total < tokens) {
    const p = paragraph(r, cast)
    parts.push(p)
    total += countTokens(p) + 1
  }
  return parts.join("\n\n")
}

/** A document that the server cuts into exactly `chunks` chunks (its default chunking). */
export const documentOfChunks = (chunks: number, seed: number, cast: ReadonlyArray<string>): string => {
  const r = makeRandom(seed)
  const step = CHUNKING.chunkSize - Math.round((CHUNKING.chunkSize * CHUNKING.overlapPercent) / 100)
  const estimate = (CHUNKING.chunkSize + (chunks - 1) * step) * 0.9
  const parts: Array<string> = []
  let tokens = 0
  for (;;) {
    const p = paragraph(r, cast)
    parts.push(p)
    tokens += countTokens(p) + 1
    if (tokens < estimate) continue
    const text = parts.join("\n\n")
    const n = chunkText(text, CHUNKING).length
    if (n === chunks) return text
    if (n > chunks) throw new Error(`a document of ${chunks} chunks: got ${n}`)
  }
}

/** A text of at most `bytes` UTF-8 bytes (ASCII here), whole paragraphs. */
export const textOfBytes = (bytes: number, seed: number, cast: ReadonlyArray<string>): string => {
  const r = makeRandom(seed)
  const parts: Array<string> = []
  let size = 0
  for (;;) {
    const p = paragraph(r, cast)
    if (size + p.length + 2 > bytes) return parts.join("\n\n")
    parts.push(p)
    size += p.length + 2
  }
}

/**
 * The cost scenario's ten texts, from one sentence to a few pages: `[name, text]`. The
 * background text states facts about every person first, so the texts find stored facts to
 * compare (as a text into a dataset in use does).
 */
export const costTexts = (): { background: string; texts: Array<{ name: string; text: string }> } => {
  const cast = people(12, 7)
  const r = makeRandom(11)
  const background = cast.map((p, i) =>
    `${p} lives in ${CITIES[i % CITIES.length]} in 2010. ${p} works at ${ORGS[i % ORGS.length]}.`
  ).join(" ")
  const sentences = (n: number) => Array.from({ length: n }, () => factSentence(r, cast)).join(" ")
  const texts = [
    { name: "one sentence", text: sentences(1) },
    { name: "two sentences", text: sentences(2) },
    { name: "a short note", text: `${sentences(2)} ${PROSE[0]} ${sentences(1)}` },
    { name: "a paragraph", text: paragraph(r, cast, 4, 4) },
    { name: "two paragraphs", text: `${paragraph(r, cast, 3, 5)}\n\n${paragraph(r, cast, 3, 5)}` },
    { name: "half a page (~400 tokens)", text: textOfTokens(400, 21, cast) },
    { name: "a page (~900 tokens)", text: textOfTokens(900, 22, cast) },
    { name: "two pages (~1,600 tokens)", text: textOfTokens(1600, 23, cast) },
    { name: "three pages (~2,500 tokens)", text: textOfTokens(2500, 24, cast) },
    { name: "five pages (~4,000 tokens)", text: textOfTokens(4000, 25, cast) }
  ]
  return { background, texts }
}
