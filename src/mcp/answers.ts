/**
 * What a model reads of a tool's answer (issue 40): plain text, a line a fact, without ids it
 * cannot use, model names, timestamps or scores. The full JSON stays in `structuredContent`
 * for hosts that read it. Pure functions over the response schemas' types.
 */
import type { RememberQueued, RememberSuccess } from "../domain/Responses.js"
import type { RememberRun } from "../domain/runView.js"
import type { ContextResponse, EntityLookup, QueryResponse, SearchResponse } from "../query/responses.js"

/** The fields of a fact a line shows. */
interface FactLike {
  readonly id: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string | null
  readonly invalid_at?: string | undefined
}

/** `2020-01-01T00:00:00.000Z` → `2020-01-01`; a time of day other than midnight is kept. */
export const day = (iso: string): string => iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso

/** `[id] statement (since …, until …)`: the fact's own words, else its triple. */
export const factLine = (f: FactLike): string => {
  const statement = f.description.trim() !== "" ? f.description.trim() : `${f.source} ${f.relation} ${f.target}`
  const when = [
    ...(f.valid_at === null ? [] : [`since ${day(f.valid_at)}`]),
    ...(f.invalid_at === undefined ? [] : [`until ${day(f.invalid_at)}`])
  ]
  return `[${f.id}] ${statement}${when.length === 0 ? "" : ` (${when.join(", ")})`}`
}

const entityLine = (
  e: { readonly id: number; readonly name: string; readonly type: string; readonly description: string }
) => `[${e.id}] ${e.name} (${e.type})${e.description.trim() === "" ? "" : `: ${e.description.trim()}`}`

const section = (title: string, lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.length === 0 ? [] : [title, ...lines]

/** get_context: the block itself (a model reads it as it would in a prompt). */
export const contextText = (r: ContextResponse): string => r.context === "" ? "Nothing is known yet." : r.context

/** search: one line a fact, then one an entity. */
export const searchText = (r: SearchResponse): string => {
  if (r.facts.length === 0 && r.entities.length === 0) return "Nothing found."
  return [
    ...section("Facts:", r.facts.map(factLine)),
    ...section("Entities:", r.entities.map(entityLine)),
    ...(r.warnings === undefined ? [] : r.warnings.map((w) => `(note: ${w})`))
  ].join("\n")
}

/** query: the answer first, then the facts it cites. */
export const queryText = (r: QueryResponse): string => {
  const cited = new Set(r.citations)
  return [r.answer, ...section("Cited facts:", r.facts.filter((f) => cited.has(f.id)).map(factLine))].join("\n")
}

/** remember: what was learned, a line a fact, and which stored facts it closed; or the run to poll. */
export const rememberText = (r: RememberSuccess | RememberQueued): string => {
  if ("status" in r) {
    return `Remember run ${r.remember_run_id} is ${r.status}: call remember_status with this id for its outcome.`
  }
  if (!("edges" in r)) return `Remembered the image (run ${r.remember_run_id}).`
  return [
    r.edges.length === 0 ? "Nothing new was learned." : "Learned:",
    ...r.edges.map(factLine),
    ...(r.invalidated_edges.length === 0
      ? []
      : [`Closed (no longer true): ${r.invalidated_edges.map((id) => `[${id}]`).join(", ")}`])
  ].join("\n")
}

/** remember_status: the status, what the run stored, and the error if any. */
export const runText = (r: RememberRun): string => {
  const lines = [`Remember run ${r.id}: ${r.status}.`]
  const response = r.response
  if (response !== undefined && "edges" in response) {
    lines.push(
      `Stored ${response.edges.length} fact(s) and ${response.entities.length} entit${
        response.entities.length === 1 ? "y" : "ies"
      }; closed ${response.invalidated_edges.length}.`
    )
  }
  if (r.error !== null) lines.push(`Error: ${r.error}`)
  return lines.join("\n")
}

/** The facts of a story a get_entity text shows at most: the latest by when they became true. */
export const STORY_LINES = 50

/** get_entity: who it is, what its texts said of it, its facts over time, its neighbours; or the candidates. */
export const entityText = (r: EntityLookup): string => {
  if ("candidates" in r) {
    return [
      `"${r.name}" may mean ${r.matches} entities; call get_entity again with the id of the one you mean:`,
      ...r.candidates.map((c) =>
        `[${c.id}] ${c.name} (${c.type})${
          c.aliases.length === 0 ? "" : `, also ${c.aliases.join(", ")}`
        }, ${c.facts} fact${c.facts === 1 ? "" : "s"}${c.description.trim() === "" ? "" : `: ${c.description.trim()}`}`
      )
    ].join("\n")
  }
  const { entity, facts, neighbours } = r
  const about = (entity.summary ?? entity.description).trim()
  const hidden = Math.max(0, facts.length - STORY_LINES)
  return [
    `[${entity.id}] ${entity.name} (${entity.type})${
      entity.aliases === undefined ? "" : `, also called ${entity.aliases.join(", ")}`
    }`,
    ...(about === "" ? [] : [about]),
    ...section(
      hidden === 0 ? "Facts:" : `Facts (the latest ${STORY_LINES} of ${facts.length}):`,
      facts.slice(hidden).map(factLine)
    ),
    ...section(
      "Connected to:",
      [neighbours.map((n) => `[${n.id}] ${n.name} (${n.type})`).join(", ")].filter((l) => l !== "")
    )
  ].join("\n")
}
