/**
 * The memory tells the truth about time (issue 36), end to end over HTTP on both databases:
 * texts remembered in every order give the same intervals, checked through the export with
 * `include_expired=true` (valid_at <= t < invalid_at, a null start unbounded) and through search
 * `as_of`. The model is scripted from the prompts, as one that follows them would answer: a
 * start the text does not give is null, an ended state is a fact with its `invalid_at`, a repeat
 * is worded differently, and answers carry fields we do not ask for. resolve_edges reads the
 * facts it is shown and calls facts exclusive as a careful model would: one home per person, one
 * spouse, one CEO per company.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { dialects } from "../support/databases.js"
import { get, postJson, serveTest } from "../support/http.js"

interface Extracted {
  readonly entities: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly edges: ReadonlyArray<
    {
      readonly source: string
      readonly relation: string
      readonly target: string
      readonly description: string
      readonly valid_at: string | null
      readonly invalid_at: string | null
    }
  >
}

interface Told {
  readonly text: string
  readonly reference_time: string
  readonly extraction: Extracted
}

const person = (name: string) => ({ name, type: "person" })
const place = (name: string) => ({ name, type: "place" })
const org = (name: string) => ({ name, type: "organization" })
const fact = (
  source: string,
  relation: string,
  target: string,
  description: string,
  valid_at: string | null,
  invalid_at: string | null = null
) => ({ source, relation, target, description, valid_at, invalid_at })

/** What the extraction of each scenario's texts answers. */
const told = (text: string, reference_time: string, extraction: Extracted): Told => ({
  text,
  reference_time,
  extraction
})

// Hana: three homes, the oldest told last
const HANA = [
  told("Hana Sato lives in Madrid since June 2024.", "2024-09-01T00:00:00Z", {
    entities: [person("Hana Sato"), place("Madrid")],
    edges: [fact("Hana Sato", "lives in", "Madrid", "Hana Sato lives in Madrid", "2024-06-01T00:00:00Z")]
  }),
  told("Hana Sato moved to Lisbon in July 2025.", "2025-08-01T00:00:00Z", {
    entities: [person("Hana Sato"), place("Lisbon")],
    edges: [fact("Hana Sato", "lives in", "Lisbon", "Hana Sato moved to Lisbon", "2025-07-01T00:00:00Z")]
  }),
  told("An old letter: Hana Sato has lived in Rome since March 2023.", "2023-05-01T00:00:00Z", {
    entities: [person("Hana Sato"), place("Rome")],
    edges: [fact("Hana Sato", "lives in", "Rome", "Hana Sato has lived in Rome", "2023-03-01T00:00:00Z")]
  })
]

// Ivan: a home, a move, and the old home's end learned late
const IVAN = [
  told("Ivan Petrov lives in Oslo.", "2020-01-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Oslo")],
    edges: [fact("Ivan Petrov", "lives in", "Oslo", "Ivan Petrov lives in Oslo", null)]
  }),
  told("Ivan Petrov moved to Bergen in April 2022.", "2022-05-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Bergen")],
    edges: [fact("Ivan Petrov", "lives in", "Bergen", "Ivan Petrov moved to Bergen", "2022-04-01T00:00:00Z")]
  }),
  told("Ivan Petrov lived in Oslo until March 2022.", "2024-01-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Oslo")],
    edges: [fact("Ivan Petrov", "lives in", "Oslo", "Ivan Petrov resided in Oslo", null, "2022-03-01T00:00:00Z")]
  })
]

// Ivan again: an end first, an older home, then the start of the first told late
const IVAN_LATE_START = [
  told("Ivan Petrov lived in Oslo until March 2022.", "2024-01-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Oslo")],
    edges: [fact("Ivan Petrov", "lives in", "Oslo", "Ivan Petrov lived in Oslo", null, "2022-03-01T00:00:00Z")]
  }),
  told("Ivan Petrov lived in Rome from 2019 to 2020.", "2024-01-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Rome")],
    edges: [
      fact(
        "Ivan Petrov",
        "lives in",
        "Rome",
        "Ivan Petrov lived in Rome",
        "2019-01-01T00:00:00Z",
        "2020-01-01T00:00:00Z"
      )
    ]
  }),
  told("Ivan Petrov has lived in Oslo since 2021.", "2021-06-01T00:00:00Z", {
    entities: [person("Ivan Petrov"), place("Oslo")],
    edges: [fact("Ivan Petrov", "lives in", "Oslo", "Ivan Petrov has lived in Oslo", "2021-01-01T00:00:00Z")]
  })
]

// Carol: a marriage, its divorce, a second marriage
const CAROL = [
  told("Carol King married Dan Wu in 2015.", "2015-06-01T00:00:00Z", {
    entities: [person("Carol King"), person("Dan Wu")],
    edges: [fact("Carol King", "is married to", "Dan Wu", "Carol King married Dan Wu", "2015-01-01T00:00:00Z")]
  }),
  told("Carol King and Dan Wu divorced in 2022.", "2022-06-01T00:00:00Z", {
    entities: [person("Carol King"), person("Dan Wu")],
    edges: [
      fact("Carol King", "is married to", "Dan Wu", "Carol King was married to Dan Wu", null, "2022-01-01T00:00:00Z")
    ]
  }),
  told("Carol King married Erik Berg in 2024.", "2024-06-01T00:00:00Z", {
    entities: [person("Carol King"), person("Erik Berg")],
    edges: [fact("Carol King", "is married to", "Erik Berg", "Carol King married Erik Berg", "2024-01-01T00:00:00Z")]
  })
]

// Globex: a CEO, her successor, and her end said again
const GLOBEX = [
  told("Maria Lopez became CEO of Globex in 2018.", "2018-03-01T00:00:00Z", {
    entities: [person("Maria Lopez"), org("Globex")],
    edges: [fact("Maria Lopez", "is CEO of", "Globex", "Maria Lopez became CEO of Globex", "2018-01-01T00:00:00Z")]
  }),
  told("Tom Reed succeeded Maria Lopez as CEO of Globex in March 2023.", "2023-04-01T00:00:00Z", {
    entities: [person("Tom Reed"), person("Maria Lopez"), org("Globex")],
    edges: [
      fact("Tom Reed", "is CEO of", "Globex", "Tom Reed is CEO of Globex", "2023-03-01T00:00:00Z"),
      fact("Maria Lopez", "is CEO of", "Globex", "Maria Lopez was CEO of Globex", null, "2023-03-01T00:00:00Z")
    ]
  }),
  told("Maria Lopez led Globex for five years.", "2023-06-01T00:00:00Z", {
    entities: [person("Maria Lopez"), org("Globex")],
    edges: [
      fact(
        "Maria Lopez",
        "is CEO of",
        "Globex",
        "Maria Lopez led Globex",
        "2018-01-01T00:00:00Z",
        "2023-03-01T00:00:00Z"
      )
    ]
  })
]

// Alice (the README's sentence) with and without her old home stored
const ALICE_HOME = told("Alice Smith lives in Berlin.", "2024-03-01T00:00:00Z", {
  entities: [person("Alice Smith"), place("Berlin")],
  edges: [fact("Alice Smith", "lives in", "Berlin", "Alice Smith lives in Berlin", null)]
})
const ALICE_MOVE = told("Alice Smith moved from Berlin to Paris in January 2025.", "2025-02-01T00:00:00Z", {
  entities: [person("Alice Smith"), place("Berlin"), place("Paris")],
  edges: [
    fact("Alice Smith", "lives in", "Berlin", "Alice Smith lived in Berlin", null, "2025-01-01T00:00:00Z"),
    fact("Alice Smith", "lives in", "Paris", "Alice Smith moved to Paris", "2025-01-01T00:00:00Z")
  ]
})

// Bob: a job, and leaving it
const BOB_JOB = told("Bob Jones works at Acme.", "2025-02-01T00:00:00Z", {
  entities: [person("Bob Jones"), org("Acme")],
  edges: [fact("Bob Jones", "works at", "Acme", "Bob Jones works at Acme", null)]
})
const BOB_LEFT = told("Bob Jones left Acme in August 2025.", "2025-09-01T00:00:00Z", {
  entities: [person("Bob Jones"), org("Acme")],
  edges: [fact("Bob Jones", "works at", "Acme", "Bob Jones worked at Acme", null, "2025-08-01T00:00:00Z")]
})

// a closed interval stated at once
const ZOE = told("Zoe Park lived in Quito from 2010 to 2014.", "2024-01-01T00:00:00Z", {
  entities: [person("Zoe Park"), place("Quito")],
  edges: [
    fact("Zoe Park", "lives in", "Quito", "Zoe Park lived in Quito", "2010-01-01T00:00:00Z", "2014-01-01T00:00:00Z")
  ]
})

const ALL: ReadonlyArray<Told> = [
  ...HANA,
  ...IVAN,
  ...IVAN_LATE_START,
  ...CAROL,
  ...GLOBEX,
  ALICE_HOME,
  ALICE_MOVE,
  BOB_JOB,
  BOB_LEFT,
  ZOE
]

const userText = (r: LlmRequest) => {
  const content = r.messages[0]?.content
  return typeof content === "string" ? content : JSON.stringify(content)
}

/** An extraction as a model writes it: the prompt's form, fenced, with a field we do not ask for. */
const extract = (r: LlmRequest) => {
  const found = ALL.find((t) => userText(r).includes(`<text>\n${t.text}\n</text>`))
  if (found === undefined) throw new Error(`no script for ${userText(r)}`)
  const edges = found.extraction.edges.map((e) => ({ ...e, confidence: 0.9 }))
  return { text: "```json\n" + JSON.stringify({ ...found.extraction, edges }) + "\n```" }
}

interface PromptFact {
  readonly index?: number
  readonly id?: number
  readonly source: string
  readonly relation: string
  readonly target: string
}

/** Which facts cannot hold at once: one home per person, one spouse, one CEO per company. */
const exclusive = (a: PromptFact, b: PromptFact) => {
  const relation = a.relation.replace(/[\s_]+/g, " ").toLowerCase()
  if (relation !== b.relation.replace(/[\s_]+/g, " ").toLowerCase()) return false
  if (relation === "lives in" || relation === "is married to") return a.source === b.source && a.target !== b.target
  if (relation === "is ceo of") return a.target === b.target && a.source !== b.source
  return false
}

/** resolve_edges as a careful model answers it from the facts it is shown. */
const resolve = (r: LlmRequest) => {
  const input = JSON.parse(userText(r)) as {
    new_facts: ReadonlyArray<PromptFact>
    existing_facts: ReadonlyArray<PromptFact>
  }
  const same = (a: PromptFact, b: PromptFact) =>
    a.source === b.source && a.relation === b.relation && a.target === b.target
  const duplicates = input.new_facts.flatMap((n) => {
    const d = input.existing_facts.find((e) => same(n, e))
    return d === undefined ? [] : [{ new: n.index!, existing: d.id! }]
  })
  const contradictions = input.new_facts.flatMap((n) => {
    const ids = input.existing_facts.filter((e) => exclusive(n, e)).map((e) => e.id!)
    return ids.length === 0 ? [] : [{ new: n.index!, existing: ids }]
  })
  return { text: `Here is my answer:\n${JSON.stringify({ duplicates, contradictions, reasoning: "by the facts" })}` }
}

const script = (r: LlmRequest) => (r.stage === "extract_graph" ? extract(r) : resolve(r))

const permutations = <A>(xs: ReadonlyArray<A>): Array<Array<A>> =>
  xs.length <= 1
    ? [[...xs]]
    : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]))

interface ExportEdge {
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly valid_at: string | null
  readonly invalid_at?: string
}

const day = (time: string) => time.slice(0, 10)
const interval = (e: ExportEdge) =>
  `${e.source} ${e.relation} ${e.target} ${e.valid_at === null ? "…" : day(e.valid_at)}–${
    e.invalid_at === undefined ? "…" : day(e.invalid_at)
  }`

/** Remembers the texts in order in a dataset of their own; its intervals from the export. */
const rememberAll = (dataset: string, texts: ReadonlyArray<Told>) =>
  Effect.gen(function*() {
    for (const t of texts) {
      const res = yield* postJson("/v1/gb/remember", {
        user_id: "u",
        dataset,
        text: t.text,
        reference_time: t.reference_time
      })
      expect(res.status, res.text).toBe(200)
    }
    const exported = yield* get(`/v1/gb/graph?user_id=u&dataset=${dataset}&include_expired=true`)
    expect(exported.status).toBe(200)
    return (exported.json.edges as ReadonlyArray<ExportEdge>).map(interval).sort()
  })

/** The facts a search `as_of` finds. */
const searchAsOf = (dataset: string, query: string, asOf: string) =>
  Effect.map(postJson("/v1/gb/search", { user_id: "u", dataset, query, as_of: asOf }), (res) => {
    expect(res.status, res.text).toBe(200)
    return (res.json.facts as ReadonlyArray<ExportEdge>).map((f) => `${f.relation} ${f.target}`).sort()
  })

const SCENARIOS: ReadonlyArray<
  { readonly name: string; readonly texts: ReadonlyArray<Told>; readonly expected: ReadonlyArray<string> }
> = [
  {
    name: "three homes, the oldest told last",
    texts: HANA,
    expected: [
      "Hana Sato lives_in Lisbon 2025-07-01–…",
      "Hana Sato lives_in Madrid 2024-06-01–2025-07-01",
      "Hana Sato lives_in Rome 2023-03-01–2024-06-01"
    ]
  },
  {
    name: "a move, and the old home's end learned late",
    texts: IVAN,
    expected: ["Ivan Petrov lives_in Bergen 2022-04-01–…", "Ivan Petrov lives_in Oslo 2020-01-01–2022-03-01"]
  },
  {
    // the end-only Oslo was cut by Rome (its start counted as unbounded); its start learned late
    // decides that contradiction again
    name: "an end, an older home, then the start told late",
    texts: IVAN_LATE_START,
    expected: ["Ivan Petrov lives_in Oslo 2021-01-01–2022-03-01", "Ivan Petrov lives_in Rome 2019-01-01–2020-01-01"]
  },
  {
    name: "a marriage, a divorce, a second marriage",
    texts: CAROL,
    expected: [
      "Carol King is_married_to Dan Wu 2015-01-01–2022-01-01",
      "Carol King is_married_to Erik Berg 2024-01-01–…"
    ]
  },
  {
    name: "a CEO succession",
    texts: GLOBEX,
    expected: ["Maria Lopez is_ceo_of Globex 2018-01-01–2023-03-01", "Tom Reed is_ceo_of Globex 2023-03-01–…"]
  }
]

for (const { dialect, makeLayer, skip } of dialects) {
  describe.skipIf(skip() !== null)(`${dialect}: the truth about time`, () => {
    it("every order of three texts gives the same intervals", async () => {
      await Effect.runPromise(
        Effect.gen(function*() {
          let n = 0
          for (const s of SCENARIOS) {
            for (const order of permutations(s.texts)) {
              const got = yield* rememberAll(`order${n++}`, order)
              expect({ scenario: s.name, order: order.map((t) => t.text), got }).toEqual({
                scenario: s.name,
                order: order.map((t) => t.text),
                got: [...s.expected].sort()
              })
            }
          }
        }).pipe(Effect.provide(serveTest(rememberLayer(makeLayer(), script))))
      )
    }, 120_000)

    it("the README's move, a job left, an interval stated at once; search as_of agrees", async () => {
      await Effect.runPromise(
        Effect.gen(function*() {
          // moved from Berlin to Paris, with Berlin stored and without
          expect(yield* rememberAll("moved", [ALICE_HOME, ALICE_MOVE])).toEqual([
            "Alice Smith lives_in Berlin 2024-03-01–2025-01-01",
            "Alice Smith lives_in Paris 2025-01-01–…"
          ])
          expect(yield* rememberAll("moved-first", [ALICE_MOVE, ALICE_HOME])).toEqual([
            "Alice Smith lives_in Berlin 2024-03-01–2025-01-01",
            "Alice Smith lives_in Paris 2025-01-01–…"
          ])
          expect(yield* rememberAll("moved-alone", [ALICE_MOVE])).toEqual([
            "Alice Smith lives_in Berlin …–2025-01-01",
            "Alice Smith lives_in Paris 2025-01-01–…"
          ])
          expect(yield* searchAsOf("moved-alone", "Where does Alice Smith live?", "2024-06-01T00:00:00Z")).toEqual([
            "lives_in Berlin"
          ])
          expect(yield* searchAsOf("moved-alone", "Where does Alice Smith live?", "2025-01-01T00:00:00Z")).toEqual([
            "lives_in Paris"
          ])
          expect(yield* searchAsOf("moved-alone", "Where does Alice Smith live?", "2025-06-01T00:00:00Z")).toEqual([
            "lives_in Paris"
          ])
          // left a job, with the job stored and without
          expect(yield* rememberAll("job", [BOB_JOB, BOB_LEFT])).toEqual([
            "Bob Jones works_at Acme 2025-02-01–2025-08-01"
          ])
          expect(yield* rememberAll("job-left", [BOB_LEFT])).toEqual(["Bob Jones works_at Acme …–2025-08-01"])
          expect(yield* searchAsOf("job-left", "Where does Bob Jones work?", "2025-09-01T00:00:00Z")).toEqual([])
          expect(yield* searchAsOf("job-left", "Where does Bob Jones work?", "2025-07-01T00:00:00Z")).toEqual([
            "works_at Acme"
          ])
          // a closed interval stated at once
          expect(yield* rememberAll("interval", [ZOE])).toEqual(["Zoe Park lives_in Quito 2010-01-01–2014-01-01"])
          expect(yield* searchAsOf("interval", "Where did Zoe Park live?", "2012-01-01T00:00:00Z")).toEqual([
            "lives_in Quito"
          ])
          expect(yield* searchAsOf("interval", "Where did Zoe Park live?", "2014-01-01T00:00:00Z")).toEqual([])
          // Hana, as of December 2024: Madrid alone, whatever the order
          for (const [k, order] of permutations(HANA).entries()) {
            yield* rememberAll(`hana${k}`, order)
            expect(yield* searchAsOf(`hana${k}`, "Where does Hana Sato live?", "2024-12-01T00:00:00Z")).toEqual([
              "lives_in Madrid"
            ])
          }
        }).pipe(Effect.provide(serveTest(rememberLayer(makeLayer(), script))))
      )
    }, 120_000)
  })
}
