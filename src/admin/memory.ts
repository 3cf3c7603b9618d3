/**
 * The admin UI's Memory view (docs/ADMIN.md): a user's memory as that user's own endpoints
 * answer it, in the chosen database. Each endpoint runs the same program as its user endpoint
 * (search, an entity's story, a fact's view) over the database's `Reads`, so an
 * operator sees exactly what the user would; only the door differs (an admin token, `db=`).
 */
import { Effect } from "effect"
import type { InvalidRequest, NotFound } from "../domain/Errors.js"
import type { EntityLookup, FactView, SearchResponse } from "../query/responses.js"
import { type AdminDatabase, findDatabase } from "./AdminDatabases.js"
import type { MemoryEntityRequest, MemoryFactRequest, MemorySearchRequest } from "./requests.js"

/** The program run over the request's database, the request without its `db`. */
const inDatabase = <R extends { readonly db?: string | undefined }, A, Err>(
  databases: ReadonlyArray<AdminDatabase>,
  { db, ...request }: R,
  program: (database: AdminDatabase, request: Omit<R, "db">) => Effect.Effect<A, Err>
): Effect.Effect<A, Err | NotFound> =>
  Effect.flatMap(findDatabase(databases, db), (database) => program(database, request))

/** `GET /v1/gb/admin/api/memory/search`: `POST /v1/gb/search` in the database. */
export const memorySearch = (
  databases: ReadonlyArray<AdminDatabase>,
  request: MemorySearchRequest
): Effect.Effect<SearchResponse, NotFound> =>
  inDatabase(databases, request, (database, search) => database.reads.search(search))

/** `GET /v1/gb/admin/api/memory/entity`: an entity's story (`GET /v1/gb/entities`) in the database. */
export const memoryEntity = (
  databases: ReadonlyArray<AdminDatabase>,
  request: MemoryEntityRequest
): Effect.Effect<EntityLookup, NotFound | InvalidRequest> =>
  inDatabase(databases, request, (database, story) => database.reads.entityStory(story))

/** `GET /v1/gb/admin/api/memory/fact`: a fact's view (`GET /v1/gb/facts/{id}`) in the database. */
export const memoryFact = (
  databases: ReadonlyArray<AdminDatabase>,
  request: MemoryFactRequest
): Effect.Effect<FactView, NotFound | InvalidRequest> =>
  inDatabase(databases, request, (database, fact) => database.reads.factView(fact))
