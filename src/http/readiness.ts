/**
 * `GET /readyz`: ready when the database answers a trivial query, the latest migration of this
 * build is applied, and the vector store answers one cheap call through its port. Each check
 * has a deadline, so a probe never hangs on a database or store that does not answer. The LLM
 * is reported (its provider, and whether one is configured) without being called and without
 * deciding readiness: a server without one still reads, and refuses remembers with a 503.
 */
import { Duration, Effect, Either } from "effect"
import { Database } from "../services/Database.js"
import { Llm } from "../services/Llm.js"
import { VectorStore } from "../services/VectorStore.js"

/** How long one check may take before it counts as failed. */
export const READY_CHECK_TIMEOUT = Duration.seconds(5)

export interface ReadinessReport {
  readonly ready: boolean
  readonly body: {
    readonly database: {
      readonly dialect?: "sqlite" | "postgres"
      readonly migration?: string
      readonly error?: string
    }
    readonly vector_store: { readonly name: string; readonly search?: string; readonly error?: string }
    readonly llm: { readonly provider: string; readonly configured: boolean }
  }
  /** `not ready: <what>` when not ready */
  readonly error?: string
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

const timedOut = (what: string) => () => ({
  message: `${what} did not answer in ${Duration.format(READY_CHECK_TIMEOUT)}`
})

/** The database and the vector store checked at once, each with its deadline. */
export const readiness: Effect.Effect<ReadinessReport, never, Database | VectorStore | Llm> = Effect.gen(function*() {
  const database = yield* Database
  const store = yield* VectorStore
  const llm = yield* Llm
  const [db, vectors] = yield* Effect.all([
    database.health.pipe(
      Effect.timeoutFail({ duration: READY_CHECK_TIMEOUT, onTimeout: timedOut("the database") }),
      Effect.either
    ),
    store.health.pipe(
      Effect.timeoutFail({ duration: READY_CHECK_TIMEOUT, onTimeout: timedOut("the vector store") }),
      Effect.either
    )
  ], { concurrency: "unbounded" })
  const withDialect = { dialect: database.dialect === "pg" ? "postgres" as const : "sqlite" as const }
  const name = store.name
  const problems: Array<string> = []
  const databaseBody = Either.match(db, {
    onRight: ({ migration }) => ({ ...withDialect, migration }),
    onLeft: (error) => {
      const check = "check" in error && error.check === "migrations" ? "migrations" : "database"
      problems.push(check)
      return { ...withDialect, error: `${check}: ${messageOf(error)}` }
    }
  })
  const storeBody = Either.match(vectors, {
    onRight: ({ search }) => ({ name, search }),
    onLeft: (error) => {
      problems.push("vector store")
      return { name, error: messageOf(error) }
    }
  })
  const body = {
    database: databaseBody,
    vector_store: storeBody,
    llm: { provider: llm.provider, configured: llm.unavailable === undefined }
  }
  return problems.length === 0
    ? { ready: true, body }
    : { ready: false, body, error: `not ready: ${problems.join(", ")}` }
})
