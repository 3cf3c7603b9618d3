/**
 * Remember a text and search what was learned, inside an Effect program: gligabao as a library.
 * The model is Anthropic's (ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL points it elsewhere), the memory
 * a SQLite file with sqlite-vec, as the server's defaults have it.
 */
import { Effect } from "effect"
import { Gligabao } from "gligabao"

const MemoryLive = Gligabao.layer({
  database: { path: process.env.GLIGABAO_EXAMPLE_DB ?? "memory.db" },
  llm: { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL }
})

const program = Effect.gen(function*() {
  const stored = yield* Gligabao.remember({
    user_id: "alice",
    text: "Alice Smith moved from Berlin to Paris in January 2025.",
    reference_time: "2025-02-01T00:00:00Z"
  })
  yield* Effect.log(`remembered in run ${stored.remember_run_id}`)

  const found = yield* Gligabao.search({ user_id: "alice", query: "Where does Alice live?" })
  for (const fact of found.facts) {
    // valid_at is null when a text gave the fact an end and no start
    const when = fact.valid_at === null ? `until ${fact.invalid_at}` : `since ${fact.valid_at}`
    console.log(`${fact.description} (${when})`)
  }
})

Effect.runPromise(program.pipe(Effect.provide(MemoryLive)))
