/**
 * A scripted model that answers as a model following gligabao's prompt would, for the tests of
 * dataset schemas (docs/SCHEMA.md): extract_graph from a table of texts, keeping to the answer
 * schema the request carries (an entity type or relation outside its enums is never answered),
 * with `valid_at` null when the text gives no start, a field the parser does not ask for
 * (`confidence`), attributes only when the schema offers them, and the instructions followed
 * (a fact a rule of the instructions excludes is left out); resolve_edges as a careful reader:
 * the same triple is a duplicate, the same source and relation with another target contradicts.
 */
import type { ScriptedAnswer } from "../../layers/testing/ScriptedLlm.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import type { LlmRequest } from "../../src/services/Llm.js"

export interface ScriptEntity {
  readonly name: string
  /** the type a model picks, by preference: the first of these the answer schema allows */
  readonly types: ReadonlyArray<string>
  readonly description?: string
  readonly attributes?: Readonly<Record<string, unknown>>
  /** left out when the system prompt's instructions hold this phrase (the model follows them) */
  readonly excludedBy?: string
}

export interface ScriptEdge {
  readonly source: string
  readonly target: string
  /** the relation a model picks, by preference: the first the answer schema allows (a phrase when any is) */
  readonly relations: ReadonlyArray<string>
  readonly valid_at?: string
  readonly invalid_at?: string
  /** left out when the system prompt's instructions hold this phrase (the model follows them) */
  readonly excludedBy?: string
}

export interface ScriptGraph {
  readonly entities: ReadonlyArray<ScriptEntity>
  readonly edges: ReadonlyArray<ScriptEdge>
}

type Json = Record<string, any>

/** The user message of a request, as text. */
export const userText = (r: LlmRequest) =>
  String(typeof r.messages[0]!.content === "string" ? r.messages[0]!.content : "")

const enclosed = (user: string) => {
  const start = user.indexOf("<text>\n")
  const end = user.lastIndexOf("\n</text>")
  return start === -1 || end === -1 ? user : user.slice(start + 7, end)
}

/** What a property of the answer schema allows: `any` (a free string), or the enum values. */
const allowed = (property: Json | undefined): { readonly any: boolean; readonly values: ReadonlySet<string> } => {
  const branches: Array<Json> = property === undefined ? [] : property.anyOf ?? [property]
  const values = new Set<string>(branches.flatMap((b) => (Array.isArray(b.enum) ? b.enum : [])))
  return { any: branches.some((b) => b.type === "string" && !Array.isArray(b.enum)), values }
}

/** The instructions block of a system prompt ("" when none). */
const instructionsOf = (system: string) => {
  const m = /<instructions>\n([\s\S]*?)\n<\/instructions>/.exec(system)
  return m === null ? "" : m[1]!
}

/**
 * The extract_graph answer to `r` for the text's scripted graph: types and relations from the
 * answer schema's enums; attributes only when the answer schema has them.
 */
export const extractAnswer = (r: LlmRequest, graph: ScriptGraph): ScriptedAnswer => {
  const root = (r.answerSchema?.schema ?? {}) as Json
  const entityProps: Json = root.properties?.entities?.items?.properties ?? {}
  const edgeProps: Json = root.properties?.edges?.items?.properties ?? {}
  const types = allowed(entityProps.type)
  const relations = allowed(edgeProps.relation)
  const attributeNames = new Set(Object.keys(entityProps.attributes?.anyOf?.[0]?.properties ?? {}))
  const instructions = instructionsOf(r.system)
  const entities = graph.entities.flatMap((e) => {
    if (e.excludedBy !== undefined && instructions.includes(e.excludedBy)) return []
    const type = e.types.find((t) => types.any || types.values.has(t))
    if (type === undefined) return []
    const attributes = Object.fromEntries(Object.entries(e.attributes ?? {}).filter(([k]) => attributeNames.has(k)))
    return [{
      name: e.name,
      type,
      description: e.description ?? `a ${type}`,
      ...(Object.keys(attributes).length === 0 ? {} : { attributes })
    }]
  })
  const named = new Set(entities.map((e) => e.name))
  const edges = graph.edges.flatMap((e) => {
    if (e.excludedBy !== undefined && instructions.includes(e.excludedBy)) return []
    if (!named.has(e.source) || !named.has(e.target)) return []
    const relation = e.relations.find((x) => relations.values.has(x)) ??
      (relations.any ? e.relations.at(-1) : undefined)
    if (relation === undefined) return []
    return [{
      source: e.source,
      target: e.target,
      relation,
      description: `${e.source} ${relation.replaceAll("_", " ")} ${e.target}`,
      valid_at: e.valid_at ?? null,
      invalid_at: e.invalid_at ?? null,
      confidence: 0.9
    }]
  })
  return { text: JSON.stringify({ entities, edges }), usage: { inputTokens: 100, outputTokens: 20 } }
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** A careful reader's resolve_edges: the same triple repeats, the same source and relation elsewhere contradicts. */
export const resolveAnswer = (r: LlmRequest): ScriptedAnswer => {
  const input = readResolveEdgesPrompt(userText(r))
  const duplicates: Array<{ new: number; existing: number }> = []
  const contradictions: Array<{ new: number; existing: Array<number> }> = []
  for (const n of input.new_facts) {
    const repeated = input.existing_facts.find((e) =>
      same(e.source, n.source) && e.relation === n.relation && same(e.target, n.target)
    )
    if (repeated !== undefined) {
      duplicates.push({ new: n.index, existing: repeated.id })
      continue
    }
    const closed = input.existing_facts
      .filter((e) => same(e.source, n.source) && e.relation === n.relation && !same(e.target, n.target))
      .map((e) => e.id)
    if (closed.length > 0) contradictions.push({ new: n.index, existing: closed })
  }
  return { text: JSON.stringify({ duplicates, contradictions }), usage: { inputTokens: 50, outputTokens: 5 } }
}

/** The script over a table of texts; a text it does not know fails the call (the test names it). */
export const schemaModel = (texts: Readonly<Record<string, ScriptGraph>>) => (r: LlmRequest): ScriptedAnswer => {
  if (r.stage === "resolve_edges") return resolveAnswer(r)
  if (r.stage !== "extract_graph") return { fail: { message: `no script for stage ${r.stage}` } }
  const text = enclosed(userText(r))
  const graph = texts[text]
  if (graph === undefined) return { fail: { message: `no scripted extraction for ${JSON.stringify(text)}` } }
  return extractAnswer(r, graph)
}
