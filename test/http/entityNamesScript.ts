/**
 * The extraction answers of entityNames.test.ts and the MCP name tests, written as a model that
 * follows the extract_graph prompt answers: each text's description of an entity in that text's
 * own words, `valid_at` null when the text gives no start, a fence and a sentence around the JSON
 * now and then, and a field the parser does not ask for.
 */
import type { LlmRequest } from "../../src/services/Llm.js"

export const NAMES_TEXTS = {
  engineer: "Alice Smith is an engineer at Acme.",
  payments: "These days Alice Smith leads the payments team.",
  tea: "Alice Smith, a person who likes green tea, visited Lisbon.",
  engineerAgain: "Alice Smith still works at Acme as an engineer.",
  zoe: "Zoë Martin lives in Lyon.",
  jones: "Alice Jones works at Initech.",
  bobJ: "Bob J. knows Alice Smith.",
  bobJones: "Bob Jones works at Acme."
} as const

const entity = (name: string, type: string, description: string, extra: object = {}) => ({
  name,
  type,
  description,
  ...extra
})
const edge = (source: string, relation: string, target: string, description: string) => ({
  source,
  target,
  relation,
  description,
  valid_at: null,
  invalid_at: null
})

const ANSWERS: Record<keyof typeof NAMES_TEXTS, object> = {
  engineer: {
    entities: [
      entity("Alice Smith", "person", "engineer at Acme"),
      entity("Acme", "organization", "a company", { confidence: 0.9 })
    ],
    edges: [edge("Alice Smith", "works at", "Acme", "Alice Smith works at Acme as an engineer.")]
  },
  payments: {
    entities: [
      entity("Alice Smith", "person", "leads the payments team"),
      entity("payments team", "organization", "a team")
    ],
    edges: [edge("Alice Smith", "leads", "payments team", "Alice Smith leads the payments team.")]
  },
  tea: {
    entities: [entity("Alice Smith", "person", "a person who likes green tea"), entity("Lisbon", "place", "a city")],
    edges: [edge("Alice Smith", "visited", "Lisbon", "Alice Smith visited Lisbon.")]
  },
  engineerAgain: {
    entities: [entity("Alice Smith", "person", "Engineer at Acme."), entity("Acme", "organization", "")],
    edges: [edge("Alice Smith", "works at", "Acme", "Alice Smith still works at Acme as an engineer.")]
  },
  zoe: {
    entities: [entity("Zoë Martin", "person", "lives in Lyon"), entity("Lyon", "place", "a city in France")],
    edges: [edge("Zoë Martin", "lives in", "Lyon", "Zoë Martin lives in Lyon.")]
  },
  jones: {
    entities: [entity("Alice Jones", "person", "works at Initech"), entity("Initech", "organization", "a company")],
    edges: [edge("Alice Jones", "works at", "Initech", "Alice Jones works at Initech.")]
  },
  // Alice Smith in capitals: the same name (key), not an alias
  bobJ: {
    entities: [entity("Bob J.", "person", "knows Alice Smith"), entity("ALICE SMITH", "person", "")],
    edges: [edge("Bob J.", "knows", "ALICE SMITH", "Bob J. knows Alice Smith.")]
  },
  bobJones: {
    entities: [entity("Bob Jones", "person", "works at Acme"), entity("Acme", "organization", "a company")],
    edges: [edge("Bob Jones", "works at", "Acme", "Bob Jones works at Acme.")]
  }
}

/** The answer to an extract_graph request of one of NAMES_TEXTS (an empty graph for any other text). */
export const extractionScript = (r: LlmRequest): string => {
  const content = r.messages[0]?.content
  const user = typeof content === "string" ? content : ""
  const key = (Object.keys(NAMES_TEXTS) as Array<keyof typeof NAMES_TEXTS>).find((k) =>
    user.includes(`<text>\n${NAMES_TEXTS[k]}\n</text>`)
  )
  if (key === undefined) return JSON.stringify({ entities: [], edges: [] })
  const json = JSON.stringify(ANSWERS[key])
  // some answers come fenced, with a sentence before, as models do despite "no prose"
  return key.length % 2 === 0 ? json : `Here is the graph:\n\`\`\`json\n${json}\n\`\`\``
}
