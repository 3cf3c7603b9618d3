/**
 * The links of facts and entities (the artifacts and sessions they came from), for SearchRepo:
 * every link (export pages, stories), or each owner's `cap` most recent (search and context
 * results), in one statement per side and chunk of owners.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { Links, ReadFilters } from "../../../../src/services/SearchRepo.js"
import { chunksOf, unique } from "../internal.js"
import type { ReadFilterSql } from "./filters.js"

/** owner id -> its links, in link order */
const groupLinks = <L>(rows: ReadonlyArray<{ readonly owner: number; readonly link: L }>) => {
  const byOwner = new Map<number, Array<L>>()
  for (const { link, owner } of rows) {
    const list = byOwner.get(owner)
    if (list === undefined) byOwner.set(owner, [link])
    else list.push(link)
  }
  return byOwner
}

const numbersAscending = (a: number, b: number) => a - b

/** owners per statement of capped links: one UNION ALL member each, under SQLite's 500 */
const CAPPED_OWNERS = 128

/** Whose links: the link tables are gb_<owner>_artifacts and gb_<owner>_sessions. */
export type LinkOwner = "edge" | "entity"

export const makeLinks = (sql: SqlClient.SqlClient, { limitOf }: ReadFilterSql) => {
  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })

  /**
   * The `cap` highest links of each owner: one walk of the link table's (owner, link) primary
   * key per owner, backwards and stopped at `cap`, so an owner with thousands of links costs
   * `cap` rows. PostgreSQL: a LATERAL subquery per owner of a VALUES list (one plan). SQLite,
   * which has no LATERAL: a UNION ALL of one walk per owner, the owners padded with 0 (no row has
   * it) to a power of two, so the statement cache holds a few shapes, not one per owner count.
   */
  const cappedLinks = (
    t: Fragment,
    owner: Fragment,
    link: Fragment,
    owners: ReadonlyArray<number>,
    hideLater: Fragment,
    cap: number
  ) => {
    if (isPg) {
      const values = sql.join(", ", false)(owners.map((id) => sql`(${id}::bigint)`))
      return sql`SELECT o.owner AS owner, w.link AS link
        FROM (VALUES ${values}) AS o (owner)
        CROSS JOIN LATERAL (
          SELECT l.${link} AS link FROM ${t} l
          WHERE l.${owner} = o.owner ${hideLater}
          ORDER BY l.${link} DESC LIMIT ${cap}
        ) w
        ORDER BY owner, link`
    }
    const padded = [...owners]
    while (padded.length & (padded.length - 1)) padded.push(0)
    const limit = limitOf(cap)
    const walks = padded.map((id) =>
      sql`SELECT * FROM (SELECT l.${owner} AS owner, l.${link} AS link
        FROM ${t} l
        WHERE l.${owner} = ${id} ${hideLater}
        ORDER BY l.${link} DESC LIMIT ${limit}) w`
    )
    return sql`SELECT owner, link FROM (${sql.join(" UNION ALL ", false)(walks)}) capped ORDER BY owner, link`
  }

  /**
   * The links of `owners` from a link table, ascending; with `cap`, only the `cap` most recent
   * (highest) per owner. Links to artifacts stored after known_at are hidden.
   */
  const linkTable = <L extends string | number>(
    table: string,
    ownerColumn: string,
    linkColumn: string,
    owners: ReadonlyArray<number>,
    filters: ReadFilters,
    cap: number | null
  ) =>
    Effect.forEach(chunksOf(unique(owners), cap === null ? undefined : CAPPED_OWNERS), (chunk) => {
      const [t, owner, link] = [sql.literal(table), sql.literal(ownerColumn), sql.literal(linkColumn)]
      const hideLater = linkColumn === "artifact_id" && filters.knownAt !== null
        ? sql`AND EXISTS (SELECT 1 FROM gb_artifacts a WHERE a.id = l.artifact_id AND a.created_at <= ${filters.knownAt})`
        : sql``
      return sql<{ owner: number; link: L }>`${
        cap === null
          ? sql`SELECT l.${owner} AS owner, l.${link} AS link FROM ${t} l
              WHERE l.${owner} IN ${sql.in(chunk)} ${hideLater}
              ORDER BY owner, link`
          : cappedLinks(t, owner, link, chunk, hideLater, cap)
      }`
    }).pipe(Effect.map((chunks) => groupLinks(chunks.flat())))

  /** The artifact and session lists of these owners, an entry for every id (empty lists when it has none). */
  const linksOf = (
    owner: LinkOwner,
    ids: ReadonlyArray<number>,
    filters: ReadFilters,
    cap: number | null
  ): Effect.Effect<ReadonlyMap<number, Links>, SqlError.SqlError> =>
    Effect.gen(function*() {
      if (ids.length === 0) return new Map()
      // PostgreSQL answers both on two connections at once; SQLite's one connection answers each
      // in a synchronous call, so fibers would only add their cost
      const [artifacts, sessions] = yield* Effect.all([
        linkTable<number>(`gb_${owner}_artifacts`, `${owner}_id`, "artifact_id", ids, filters, cap),
        linkTable<string>(`gb_${owner}_sessions`, `${owner}_id`, "session_id", ids, filters, cap)
      ], { concurrency: isPg ? "unbounded" : undefined })
      return new Map(ids.map((id) => [id, {
        artifact_ids: (artifacts.get(id) ?? []).sort(numbersAscending),
        session_ids: sessions.get(id) ?? []
      }]))
    })

  /** `rows` with every one of their links (pages, stories: links are filtered by known_at only) */
  const withAllLinks = <R extends { readonly id: number }>(
    owner: LinkOwner,
    rows: ReadonlyArray<R>,
    filters: ReadFilters
  ): Effect.Effect<ReadonlyArray<R & Links>, SqlError.SqlError> =>
    Effect.map(
      linksOf(owner, rows.map((r) => r.id), filters, null),
      (byId) => rows.map((row) => ({ ...row, ...byId.get(row.id)! }))
    )

  return { linksOf, withAllLinks }
}
