/**
 * SearchRepo on SQL, the read side's retrieval boundary: each question of the port answered by
 * one of the files under search/, each method a span (`SearchRepo.<method>`).
 *
 * - search/textMatch.ts: the full-text candidates (FTS5 over the dataset's own tables with a
 *   top-N fast path on SQLite; tsvector + ts_rank on PostgreSQL);
 * - search/filters.ts: the read filters as SQL, shared by every statement;
 * - search/rows.ts: filter checks by id, rows by id, the neighbourhood, the recent facts, pages;
 * - search/links.ts: the link lists, capped per owner or whole;
 * - search/story.ts: an entity's story and a fact's view; search/sessions.ts: the sessions;
 * - search/names.ts: entities by words of their names, and what their texts stated of them.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import {
  MAX_RESULT_LINKS,
  type PageRows,
  type ReadFilters,
  type ReadKind,
  SearchRepo
} from "../../../src/services/SearchRepo.js"
import { ServiceSpans, traced } from "../../../src/telemetry/traced.js"
import { datasetByName } from "./Datasets.js"
import { unique } from "./internal.js"
import { makeReadFilters } from "./search/filters.js"
import { makeLinks } from "./search/links.js"
import { makeNames } from "./search/names.js"
import { makeRows } from "./search/rows.js"
import { makeSessions } from "./search/sessions.js"
import { makeStory } from "./search/story.js"
import { makeTextMatch } from "./search/textMatch.js"

export { RETRY_FAST_EVERY, WEIGHTED_IDF_ROWS } from "./search/textMatch.js"

type Pager<A> = (
  datasetId: number,
  filters: ReadFilters,
  afterId: number,
  limit: number
) => Effect.Effect<ReadonlyArray<A>>

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const readFilters = makeReadFilters(sql)
  const { matchEntities, matchFacts } = makeTextMatch(sql, readFilters)
  const rows = makeRows(sql, readFilters)
  const links = makeLinks(sql, readFilters)
  const story = makeStory(sql, links, rows.ENTITY_SELECT)
  const names = makeNames(sql)

  /** result lists show each owner's most recent links only: a hub's thousands stay out of a response */
  const resultLinks = (kind: ReadKind, ids: ReadonlyArray<number>, filters: ReadFilters) =>
    Effect.orDie(links.linksOf(kind === "fact" ? "edge" : "entity", unique(ids), filters, MAX_RESULT_LINKS))

  const pages: { readonly [K in keyof PageRows]: Pager<PageRows[K]> } = {
    entities: (datasetId, filters, afterId, limit) =>
      Effect.orDie(
        Effect.flatMap(rows.pageRows.entities(datasetId, filters, afterId, limit), (found) =>
          links.withAllLinks("entity", found, filters))
      ),
    facts: (datasetId, filters, afterId, limit) =>
      Effect.orDie(
        Effect.flatMap(rows.pageRows.facts(datasetId, filters, afterId, limit), (found) =>
          links.withAllLinks("edge", found, filters))
      ),
    artifacts: (datasetId, filters, afterId, limit) =>
      Effect.orDie(rows.pageRows.artifacts(datasetId, filters, afterId, limit))
  }
  const page = <K extends keyof PageRows>(kind: K, ...args: Parameters<Pager<PageRows[K]>>) =>
    (pages[kind] as Pager<PageRows[K]>)(...args)

  const spans = yield* ServiceSpans
  return SearchRepo.of(traced("SearchRepo", {
    parallel: sql.onDialectOrElse({ pg: () => true, orElse: () => false }),
    dataset: datasetByName(sql),
    matchEntities,
    matchFacts,
    passing: rows.passing,
    factsAround: rows.factsAround,
    facts: rows.facts,
    entities: rows.entities,
    links: resultLinks,
    artifacts: rows.artifacts,
    summariesOf: rows.summariesOf,
    recentFacts: rows.recentFacts,
    page,
    entity: story.entity,
    entityFacts: story.entityFacts,
    entitiesNamed: names.entitiesNamed,
    entityAliases: names.entityAliases,
    entityStatements: names.entityStatements,
    sessions: makeSessions(sql),
    factById: story.factById,
    factSources: story.factSources,
    factClosures: story.factClosures
  }, spans))
})

export const SearchRepoLive: Layer.Layer<SearchRepo, never, SqlClient.SqlClient> = Layer.effect(SearchRepo, make)
