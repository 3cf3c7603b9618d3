import { Context, Effect, Layer } from "effect"
import { NotFound } from "../domain/Errors.js"
import { DEFAULT_PRICES } from "../kernel/cost.js"
import type { ReadDeps } from "../query/deps.js"
import { Reads, type ReadsService } from "../query/Reads.js"
import { AdminRepo } from "../services/AdminRepo.js"
import { Database } from "../services/Database.js"
import { InferencesRepo } from "../services/InferencesRepo.js"
import { RunLogRepo } from "../services/RunLogRepo.js"

/** One database the admin UI reads: the first serves the API, others are only shown. */
export interface AdminDatabase {
  readonly name: string
  readonly dialect: "sqlite" | "postgres"
  readonly primary: boolean
  readonly runLog: RunLogRepo["Type"]
  readonly inferences: InferencesRepo["Type"]
  readonly admin: AdminRepo["Type"]
  /**
   * the read programs over this database (the Memory view runs the user endpoints' programs);
   * an extra file has no vector store or LLM of its own
   */
  readonly reads: ReadsService
}

/**
 * The read dependencies of a database's repositories alone (an extra file of the admin UI): no
 * embeddings, vector store or LLM, which are the first database's. Search then runs its full
 * text and graph sources.
 */
export const repositoriesReadDeps = (repositories: Pick<ReadDeps, "datasets" | "search" | "inferences">): ReadDeps => ({
  ...repositories,
  embeddings: null,
  vectors: null,
  llm: null,
  prices: DEFAULT_PRICES
})

/**
 * The databases of the admin UI, by name. Every composition that serves the admin API provides
 * it: `serve` its `--db` files (`adminDatabasesFor`), `Gligabao.layer` and the tests the app's
 * own storage alone (`AppDatabaseLive`).
 */
export class AdminDatabases
  extends Context.Tag("gligabao/AdminDatabases")<AdminDatabases, ReadonlyArray<AdminDatabase>>()
{}

/** A database's name in the admin UI: the SQLite file's name without extension, or the PostgreSQL database's. */
export const databaseName = (location: { readonly path: string } | { readonly url: string }): string => {
  if ("url" in location) {
    try {
      const name = decodeURIComponent(new URL(location.url).pathname.replace(/^\//, ""))
      return name === "" ? "postgres" : name
    } catch {
      return "postgres"
    }
  }
  const file = location.path.split(/[\\/]/).pop() ?? location.path
  if (file === ":memory:") return "memory"
  return file.replace(/\.(db|sqlite3?)$/i, "") || file
}

/** The first name given twice, if any: two databases must not answer to one `db=`. */
export const duplicateName = (names: ReadonlyArray<string>): string | undefined =>
  names.find((name, index) => names.indexOf(name) !== index)

/** The app's own storage as the one database, named `default`. */
export const AppDatabaseLive: Layer.Layer<
  AdminDatabases,
  never,
  RunLogRepo | AdminRepo | InferencesRepo | Reads | Database
> = Layer.effect(
  AdminDatabases,
  Effect.gen(function*() {
    const database: AdminDatabase = {
      name: "default",
      dialect: (yield* Database).dialect === "pg" ? "postgres" : "sqlite",
      primary: true,
      runLog: yield* RunLogRepo,
      inferences: yield* InferencesRepo,
      admin: yield* AdminRepo,
      reads: yield* Reads
    }
    return [database]
  })
)

export const findDatabase = (
  databases: ReadonlyArray<AdminDatabase>,
  name: string | undefined
): Effect.Effect<AdminDatabase, NotFound> => {
  const found = name === undefined ? databases.find((d) => d.primary) : databases.find((d) => d.name === name)
  return found === undefined
    ? Effect.fail(
      new NotFound({
        message: `no database named ${JSON.stringify(name)} (known: ${
          databases.map((d) => d.name).join(", ") || "none"
        })`
      })
    )
    : Effect.succeed(found)
}
