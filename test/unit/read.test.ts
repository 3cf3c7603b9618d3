/**
 * The pure pieces of the read side: query words, reciprocal rank fusion (with properties),
 * request validation, the query answer's parsing, GraphML text, and the test XML parser.
 */
import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fuseRanks, RRF_K } from "../../src/kernel/fusion.js"
import { buildQueryPrompt, parseQueryAnswer } from "../../src/query/answer.js"
import { entityNode, factEdge, graphmlFooter, graphmlHeader, xmlText } from "../../src/query/graphml.js"
import {
  validateGraphRequest,
  validateQueryRequest,
  validateScope,
  validateSearchRequest,
  validateUserId
} from "../../src/query/requests.js"
import { MAX_TERMS, queryTerms } from "../../src/query/terms.js"
import { dataOf, parseXml } from "../support/xml.js"

describe("queryTerms", () => {
  it("keeps content words, lowercased, once each, in order", () => {
    expect(queryTerms("Where does Alice Smith live? Alice!")).toEqual(["alice", "smith", "live"])
  })
  it("keeps stop words when there is nothing else", () => {
    expect(queryTerms("The Who")).toEqual(["the", "who"])
  })
  it("splits on anything that is not a letter, mark or digit, and normalizes", () => {
    expect(queryTerms("e-mail: ﬁle #42 naïve")).toEqual(["e", "mail", "file", "42", "naïve"])
    expect(queryTerms("?!... --")).toEqual([])
    expect(queryTerms("北京 東京")).toEqual(["北京", "東京"])
  })
  it("caps the number of words", () => {
    const many = Array.from({ length: 100 }, (_, i) => `word${i}`).join(" ")
    expect(queryTerms(many)).toHaveLength(MAX_TERMS)
  })
})

describe("fuseRanks", () => {
  it("sums 1 / (k + rank) over the lists and names the sources in a fixed order", () => {
    const fused = fuseRanks([
      { source: "graph", ids: [3, 1] },
      { source: "fulltext", ids: [1, 2] },
      { source: "vector", ids: [2] }
    ])
    expect(fused.map((f) => f.id)).toEqual([1, 2, 3])
    expect(fused[0]).toEqual({ id: 1, score: 1 / (RRF_K + 2) + 1 / (RRF_K + 1), found_by: "fulltext+graph" })
    expect(fused[1]!.found_by).toBe("fulltext+vector")
    expect(fused[2]).toEqual({ id: 3, score: 1 / (RRF_K + 1), found_by: "graph" })
  })
  it("counts a repeat within a list once, at its best rank; two lists of one source name it once", () => {
    const fused = fuseRanks([{ source: "vector", ids: [5, 5, 6] }, { source: "vector", ids: [6] }])
    expect(fused.find((f) => f.id === 5)!.score).toBeCloseTo(1 / (RRF_K + 1), 15)
    expect(fused.find((f) => f.id === 6)).toMatchObject({
      score: 1 / (RRF_K + 3) + 1 / (RRF_K + 1),
      found_by: "vector"
    })
  })
  it("properties: every id once, scores descending, found by at least one source, bounded score", () => {
    const list = fc.record({
      source: fc.constantFrom("fulltext" as const, "vector" as const, "graph" as const),
      ids: fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 20 })
    })
    fc.assert(fc.property(fc.array(list, { maxLength: 5 }), (lists) => {
      const fused = fuseRanks(lists)
      const all = new Set(lists.flatMap((l) => l.ids))
      expect(new Set(fused.map((f) => f.id))).toEqual(all)
      expect(fused.length).toBe(all.size)
      for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.score).toBeGreaterThanOrEqual(fused[i]!.score)
      for (const f of fused) {
        expect(f.found_by).toMatch(/^(fulltext|vector|graph)(\+(vector|graph))*$/)
        const holding = lists.filter((l) => l.ids.includes(f.id)).length
        expect(f.score).toBeLessThanOrEqual(holding / (RRF_K + 1) + 1e-12)
        expect(f.score).toBeGreaterThan(0)
      }
    }))
  })
  it("an id ranked first by two lists beats one ranked first by one", () => {
    const fused = fuseRanks([{ source: "fulltext", ids: [1, 2] }, { source: "vector", ids: [2, 1] }, {
      source: "graph",
      ids: [2]
    }])
    expect(fused[0]!.id).toBe(2)
  })
})

const ok = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got ${JSON.stringify(e.left)}`)
  return e.right
}
const problem = <A>(e: Either.Either<A, { message: string }>): string => {
  if (Either.isRight(e)) throw new Error(`expected Left, got ${JSON.stringify(e.right)}`)
  return e.left.message
}

describe("read request validation", () => {
  it("fills the defaults and normalizes times", () => {
    expect(ok(validateSearchRequest({ user_id: "u", query: "q" }))).toEqual({
      user_id: "u",
      dataset: "main",
      query: "q",
      as_of: undefined,
      known_at: undefined,
      include_expired: false,
      session_id: undefined,
      kind: undefined,
      limit: 10,
      hops: 1
    })
    const q = ok(validateQueryRequest({
      user_id: "u",
      query: "q",
      as_of: "2025-01-31T12:00:00+02:00",
      kind: "episode",
      models: { query: "m" },
      reasoning: { query: "high" }
    }))
    expect(q).toMatchObject({
      as_of: "2025-01-31T10:00:00.000Z",
      kind: "episode",
      limit: 20,
      model: "m",
      reasoning: "high"
    })
    expect(ok(validateQueryRequest({ user_id: "u", query: "q", models: { query: "" } })).model).toBeUndefined()
  })
  it("names the field of the first problem", () => {
    expect(problem(validateSearchRequest(null))).toMatch(/body must be a JSON object/)
    expect(problem(validateSearchRequest({ user_id: "u", query: "q", limit: 101 }))).toMatch(
      /^limit must be an integer from 1 to 100$/
    )
    expect(problem(validateSearchRequest({ user_id: "u", query: "q", hops: -1 }))).toMatch(/^hops/)
    expect(problem(validateSearchRequest({ user_id: "u".repeat(257), query: "q" }))).toMatch(
      /^user_id must be at most 256 bytes/
    )
    expect(problem(validateQueryRequest({ user_id: "u", query: "q", reasoning: "low" }))).toMatch(
      /^reasoning must be an object/
    )
  })
  it("reads query parameters: booleans, formats, scope", () => {
    expect(ok(validateGraphRequest({ user_id: "u", include_expired: "true", format: "graphml" }))).toMatchObject({
      include_expired: true,
      format: "graphml",
      dataset: "main"
    })
    expect(ok(validateGraphRequest({ user_id: "u", include_expired: "false" })).include_expired).toBe(false)
    expect(problem(validateGraphRequest({ user_id: "u", include_expired: "" }))).toBe(
      "include_expired must be a boolean"
    )
    expect(problem(validateGraphRequest({ user_id: "u", format: "GraphML" }))).toBe("format must be json or graphml")
    expect(problem(validateGraphRequest({ user_id: "u", format: "xml" }))).toBe("format must be json or graphml")
    expect(ok(validateScope({ user_id: "u", dataset: "d" }))).toEqual({ user_id: "u", dataset: "d" })
    expect(problem(validateUserId({}))).toBe("user_id is required")
  })
})

describe("the query answer", () => {
  it("keeps the citations among the given facts, each once, in citation order", () => {
    const parsed = ok(
      parseQueryAnswer("Sure:\n```json\n{\"answer\": \"Paris [2]\", \"citations\": [2, \"7\", 99, 2]}\n```", [7, 2, 3])
    )
    expect(parsed).toEqual({ answer: "Paris [2]", citations: [2, 7], dropped: [99] })
  })
  it("citations are optional", () => {
    expect(ok(parseQueryAnswer("{\"answer\": \"Not known.\"}", [1]))).toEqual({
      answer: "Not known.",
      citations: [],
      dropped: []
    })
  })
  it("fails with one sentence on an unusable answer", () => {
    expect(problem(Either.mapLeft(parseQueryAnswer("no json here", [1]), (message) => ({ message })))).toMatch(
      /^query answer is not JSON/
    )
    expect(problem(Either.mapLeft(parseQueryAnswer("{\"answer\": 3}", [1]), (message) => ({ message })))).toMatch(
      /^query answer is invalid: `answer`/
    )
    expect(
      problem(
        Either.mapLeft(parseQueryAnswer("{\"answer\": \"x\", \"citations\": [1.5]}", [1]), (message) => ({ message }))
      )
    )
      .toMatch(/citations/)
  })
  it("the prompt carries the facts with their validity, as JSON", () => {
    const prompt = buildQueryPrompt({
      question: "Where?",
      asOf: "2025-06-01T00:00:00.000Z",
      facts: [{
        id: 4,
        source: "A",
        source_id: 1,
        target: "B",
        target_id: 2,
        relation: "lives in",
        description: "A lives in B",
        valid_at: "2024-01-01T00:00:00.000Z",
        invalid_at: "2025-01-01T00:00:00.000Z",
        created_at: "2024-01-01T00:00:00.000Z",
        artifact_ids: [],
        session_ids: []
      }],
      entities: []
    })
    const data = JSON.parse(prompt.messages[0]!.content as string)
    expect(data.facts).toEqual([{
      id: 4,
      statement: "A lives in B",
      source: "A",
      relation: "lives in",
      target: "B",
      valid_at: "2024-01-01T00:00:00.000Z",
      invalid_at: "2025-01-01T00:00:00.000Z"
    }])
    expect(prompt.system).toMatch(/nothing else/)
  })
  it("a fact whose start is unknown goes to the model with valid_at null, which the prompt explains", () => {
    const prompt = buildQueryPrompt({
      question: "Where?",
      asOf: "2024-06-01T00:00:00.000Z",
      facts: [{
        id: 5,
        source: "A",
        source_id: 1,
        target: "B",
        target_id: 2,
        relation: "lives in",
        description: "A lives in B",
        valid_at: null,
        invalid_at: "2025-01-01T00:00:00.000Z",
        created_at: "2025-02-01T00:00:00.000Z",
        artifact_ids: [],
        session_ids: []
      }],
      entities: []
    })
    const data = JSON.parse(prompt.messages[0]!.content as string)
    expect(data.facts[0]).toMatchObject({ id: 5, valid_at: null, invalid_at: "2025-01-01T00:00:00.000Z" })
    expect(prompt.system).toMatch(/valid_at of null means the start is unknown/)
  })
})

describe("GraphML text", () => {
  it("escapes markup and drops characters XML 1.0 cannot hold", () => {
    expect(xmlText("a<b & \"c\" 'd'>")).toBe("a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;")
    expect(xmlText("x\u0000\u0001\u0008y\u000B\uFFFE\uFFFFz\tn\n")).toBe("xyz\tn\n")
    expect(xmlText("lone \uD800 high, emoji 🐱 kept")).toBe("lone  high, emoji 🐱 kept")
  })
  it("property: any text round-trips through an XML attribute and element, minus forbidden characters", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      const doc = `<a v="${xmlText(s)}">${xmlText(s)}</a>`
      const root = parseXml(doc)
      const expected = s.replace(/[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
      expect(root.attributes.v).toBe(expected)
      expect(root.text).toBe(expected)
    }))
  })
  it("a document of header, a node, an edge and the footer parses", () => {
    const doc = graphmlHeader({ id: "dataset-1", dataset: "d", asOf: "t", knownAt: "t" }) +
      entityNode({
        id: 1,
        name: "A & B",
        type: "x",
        description: "",
        created_at: "t",
        artifact_ids: [3, 4],
        session_ids: ["s 1"]
      }) +
      factEdge({
        id: 9,
        source: "A",
        source_id: 1,
        target: "A",
        target_id: 1,
        relation: "is",
        description: "d",
        valid_at: "t",
        created_at: "t",
        artifact_ids: [],
        session_ids: []
      }) + graphmlFooter
    const graph = parseXml(doc).children.find((c) => c.name === "graph")!
    const node = graph.children.find((c) => c.name === "node")!
    expect(dataOf(node)).toMatchObject({ n_label: "A & B", n_artifact_ids: "3 4", n_session_ids: "[\"s 1\"]" })
    expect(graph.children.find((c) => c.name === "edge")!.attributes).toMatchObject({
      id: "f9",
      source: "e1",
      target: "e1"
    })
  })
})

describe("the test XML parser rejects what is not well-formed", () => {
  it.each([
    ["<a><b></a>", /closes/],
    ["<a x=1/>", /unquoted/],
    ["<a>&</a>", /bare/],
    ["<a>&nbsp;</a>", /unknown entity/],
    ["<a/><b/>", /after the root/],
    ["<a x=\"1\" x=\"2\"/>", /repeated/],
    ["<a>\u0001</a>", /forbids/],
    ["<a>", /never closed/]
  ])("%s", (input, message) => {
    expect(() => parseXml(input)).toThrow(message)
  })
})
