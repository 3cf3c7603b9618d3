/**
 * An entity by part of its name, and an entity described by all its texts. Pure: the lookup's
 * candidates and the statements come from SearchRepo (entitiesNamed, entityStatements).
 *
 * A name is found by whole words, case and accents folded (src/kernel/nameWords.ts): "alice"
 * finds "Alice Smith", "zoe" finds "Zoë", never "Ali" for "Alice". The name spelled whole comes
 * first, then an alias spelled whole, then the names and aliases that hold every word.
 */
import { foldedName, nameWords } from "../kernel/nameWords.js"
import { collapseWhitespace } from "../kernel/normalize.js"
import type { EntityStatement, NamedEntity } from "../services/SearchRepo.js"

/** How a candidate matched, best first. */
export const MATCHES = ["name", "alias", "words of the name", "words of an alias"] as const
export type NameMatch = typeof MATCHES[number]

export interface RankedName {
  readonly entity: NamedEntity
  readonly match: NameMatch
}

const holdsAll = (words: ReadonlyArray<string>, asked: ReadonlyArray<string>) => {
  const have = new Set(words)
  return asked.every((w) => have.has(w))
}

const matchOf = (asked: ReadonlyArray<string>, e: NamedEntity): NameMatch | undefined => {
  const whole = asked.join(" ")
  if (foldedName(e.name) === whole) return "name"
  if (e.aliases.some((a) => foldedName(a) === whole)) return "alias"
  if (holdsAll(nameWords(e.name), asked)) return "words of the name"
  // the words index holds a name's and its aliases' words together: one alias must hold them all
  if (e.aliases.some((a) => holdsAll(nameWords(a), asked))) return "words of an alias"
  return undefined
}

/** The candidates that match `name`, best match first, then the most facts, then lowest id. */
export const rankNamed = (name: string, found: ReadonlyArray<NamedEntity>): Array<RankedName> => {
  const asked = nameWords(name)
  return found.flatMap((entity) => {
    const match = matchOf(asked, entity)
    return match === undefined ? [] : [{ entity, match }]
  }).sort((a, b) =>
    MATCHES.indexOf(a.match) - MATCHES.indexOf(b.match) || b.entity.facts - a.entity.facts ||
    a.entity.id - b.entity.id
  )
}

export type NameResolution =
  | { readonly _tag: "None" }
  | { readonly _tag: "One"; readonly entity: NamedEntity }
  | { readonly _tag: "Many"; readonly candidates: ReadonlyArray<RankedName> }

/**
 * The entity a name means. The name spelled whole: the one with the most facts (entities of
 * several types may share a name, as before). Else one entity with it as an alias, or one
 * holding its words; more than one is ambiguous, and the caller chooses among the candidates.
 */
export const resolveName = (ranked: ReadonlyArray<RankedName>): NameResolution => {
  const best = ranked[0]
  if (best === undefined) return { _tag: "None" }
  if (best.match === "name") return { _tag: "One", entity: best.entity }
  const tier = best.match === "alias" ? ranked.filter((r) => r.match === "alias") : ranked
  return tier.length === 1 ? { _tag: "One", entity: best.entity } : { _tag: "Many", candidates: tier }
}

/** An entity's summary is cut at this many characters. */
export const SUMMARY_CHARS = 300
/** The most recent statements read per entity for its summary. */
export const SUMMARY_STATEMENTS = 12

const statementText = (description: string) => collapseWhitespace(description).replace(/[.;\s]+$/u, "")

/**
 * What an entity's texts stated of it, as one line: the newest first (reference time, then the
 * latest stored), each once (case, accents and punctuation aside; one whose words another
 * already holds in a row is left out), joined by "; " while the line stays within `chars`. A
 * first statement longer than that is cut at a word, with "…". Empty when no text described it.
 */
export const summaryOf = (statements: ReadonlyArray<EntityStatement>, chars: number = SUMMARY_CHARS): string => {
  const newest = [...statements].sort((a, b) =>
    a.valid_at < b.valid_at ? 1 : a.valid_at > b.valid_at ? -1 : b.artifact_id - a.artifact_id
  )
  const kept: Array<{ readonly text: string; readonly folded: string }> = []
  for (const s of newest) {
    const text = statementText(s.description)
    const folded = foldedName(text)
    if (folded === "" || kept.some((k) => ` ${k.folded} `.includes(` ${folded} `))) continue
    kept.push({ text, folded })
  }
  let line = ""
  for (const { text } of kept) {
    const next = line === "" ? text : `${line}; ${text}`
    if ([...next].length <= chars) line = next
    else if (line === "") return cut(text, chars)
  }
  return line
}

/** `text` within `chars` code points, cut after a whole word, with "…". */
const cut = (text: string, chars: number): string => {
  const points = [...text].slice(0, Math.max(0, chars - 1)).join("")
  const space = points.lastIndexOf(" ")
  return `${(space > 0 ? points.slice(0, space) : points).trimEnd()}…`
}

/** The summary of each entity from its statements. */
export const summariesOf = (statements: ReadonlyArray<EntityStatement>): Map<number, string> => {
  const byEntity = new Map<number, Array<EntityStatement>>()
  for (const s of statements) {
    const list = byEntity.get(s.entity_id)
    if (list === undefined) byEntity.set(s.entity_id, [s])
    else list.push(s)
  }
  return new Map([...byEntity].map(([id, list]) => [id, summaryOf(list)]))
}
