/**
 * The web_search stage's request and answer (spec/contracts.md section 13): one Messages call
 * with Anthropic's server-side web search tool per key entity. The answer's content blocks say
 * which queries ran (`server_tool_use`), what they found (`web_search_tool_result`) and what
 * the model wrote (`text`); a failed search arrives inside a 200 as a tool result error.
 */
import type { EntityRow } from "../../domain/Rows.js"
import { storableText } from "../../kernel/json.js"

export const WEB_SEARCH_MAX_TOKENS = 2048
/** searches the model may run per entity */
export const WEB_SEARCH_MAX_USES = 3

export const WEB_SEARCH_TOOL = {
  type: "web_search_20250305",
  name: "web_search",
  max_uses: WEB_SEARCH_MAX_USES
} as const

const SYSTEM = `You research the latest news about one entity for a memory system, using web search.
Search the web for the most recent dated events about the entity as of the reference time (nothing after it).
Then write a short factual briefing in plain prose: one sentence per event, naming the entity in full and giving the event's date (as precise as the sources allow).
Write only what the sources state: no speculation, no advice, no preamble, no list of sources.
If the search finds nothing about this entity, answer with nothing.`

export const buildWebSearchPrompt = (input: {
  readonly referenceTime: string
  readonly entity: Pick<EntityRow, "name" | "type" | "description">
}): { readonly system: string; readonly user: string } => {
  const { entity } = input
  const about = `${entity.name} (${entity.type})${entity.description === "" ? "" : `: ${entity.description}`}`
  return {
    system: SYSTEM,
    user:
      `Reference time: ${input.referenceTime}\nEntity: ${about}\n\nWhat are the latest events about ${entity.name} up to the reference time?`
  }
}

export interface WebSource {
  readonly url: string
  readonly title: string | null
  readonly page_age: string | null
}

export interface WebSearchAnswer {
  /** the model's answer after its last search (all its text if it did not search) */
  readonly text: string
  /** the queries the model issued, in order */
  readonly queries: ReadonlyArray<string>
  /** the results of every search, by URL, in order of first appearance */
  readonly sources: ReadonlyArray<WebSource>
  /** error codes of searches that failed (e.g. max_uses_exceeded, too_many_requests) */
  readonly toolErrors: ReadonlyArray<string>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

// what gets stored (the artifact's text, query and sources) is made storable here
const str = (u: unknown): string | null => (typeof u === "string" ? storableText(u) : null)

/** Reads the content blocks of a Messages answer; anything unexpected is skipped, never thrown. */
export const readWebSearchAnswer = (blocks: ReadonlyArray<unknown>): WebSearchAnswer => {
  const queries: Array<string> = []
  const sources = new Map<string, WebSource>()
  const toolErrors: Array<string> = []
  const texts: Array<{ readonly text: string; readonly afterSearch: number }> = []
  let searches = 0
  for (const block of blocks) {
    if (!isObject(block)) continue
    switch (block.type) {
      case "server_tool_use": {
        const query = isObject(block.input) ? str(block.input.query) : null
        if (block.name === "web_search" && query !== null && query.trim() !== "") queries.push(query.trim())
        break
      }
      case "web_search_tool_result": {
        searches++
        const content = block.content
        if (Array.isArray(content)) {
          for (const result of content) {
            if (!isObject(result) || result.type !== "web_search_result") continue
            const url = str(result.url)
            if (url === null || sources.has(url)) continue
            sources.set(url, { url, title: str(result.title), page_age: str(result.page_age) })
          }
        } else if (isObject(content)) {
          toolErrors.push(str(content.error_code) ?? "unknown_error")
        }
        break
      }
      case "text": {
        const text = str(block.text)
        if (text !== null) texts.push({ text, afterSearch: searches })
        break
      }
    }
  }
  // the narration before a search ("I'll search for...") is not part of the answer
  const final = texts.filter((t) => t.afterSearch === searches)
  return {
    text: final.map((t) => t.text).join("").trim(),
    queries,
    sources: [...sources.values()],
    toolErrors
  }
}
