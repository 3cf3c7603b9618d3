// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
/**
 * The read filters of SearchRepo as SQL: time, session and kind conditions on facts (alias e),
 * entities (alias n) and artifacts (alias a), shared by the full-text match and the row reads.
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { ReadFilters } from "./SearchRepo.js"

export const makeReadFilters = (sql: SqlClient.SqlClient) => {
  /**
   * The artifact `alias` is of `kind`, or is a chunk (or a chunk's summary) of a document of
   * that kind: a chunk is only a piece of what the caller remembered.
   */
  const artifactOfKind = (alias: string, kind: string) =>
    sql`(${sql.literal(alias)}.kind = ${kind} OR (${sql.literal(alias)}.kind IN ('chunk', 'chunk_summary') AND EXISTS (
      SELECT 1 FROM gb_artifacts p LEFT JOIN gb_artifacts gp ON gp.id = p.parent_id
      WHERE p.id = ${
      sql.literal(alias)
    }.parent_id AND (p.kind = ${kind} OR (p.kind = 'chunk' AND gp.kind = ${kind})))))`

  const knownBy = (alias: string, f: ReadFilters): Array<Fragment> =>
    f.knownAt === null ? [] : [sql`${sql.literal(alias)}.created_at <= ${f.knownAt}`]

  /**
   * facts (alias e) that pass the time, session and kind filters. A null valid_at (the start is
   * unknown) is unbounded below: it had started by any asOf. No index holds valid_at, so the OR
   * is a residual test like the rest, after the index that picked the rows.
   */
  const factFilters = (f: ReadFilters): Fragment => {
    const clauses: Array<Fragment> = [sql`(e.valid_at IS NULL OR e.valid_at <= ${f.asOf})`, ...knownBy("e", f)]
    if (!f.includeExpired) {
      // as known at knownAt: a close recorded later had not happened yet
      const ended = f.knownAt === null
        ? sql`e.invalid_at`
        : sql`(CASE WHEN e.expired_at > ${f.knownAt} THEN NULL ELSE e.invalid_at END)`
      clauses.push(sql`(${ended} IS NULL OR ${ended} > ${f.asOf})`)
    }
    if (f.sessionId !== null) {
      clauses.push(
        sql`EXISTS (SELECT 1 FROM gb_edge_sessions es WHERE es.edge_id = e.id AND es.session_id = ${f.sessionId})`
      )
    }
    if (f.kind !== null) {
      clauses.push(sql`EXISTS (SELECT 1 FROM gb_edge_artifacts ea JOIN gb_artifacts a ON a.id = ea.artifact_id
        WHERE ea.edge_id = e.id AND ${sql.and([artifactOfKind("a", f.kind), ...knownBy("a", f)])})`)
    }
    return sql.and(clauses)
  }

  /** entities (alias n): they have no event time, so only known_at, session and kind apply */
  const entityFilters = (f: ReadFilters): Fragment => {
    const clauses: Array<Fragment> = [...knownBy("n", f)]
    if (f.sessionId !== null) {
      clauses.push(
        sql`EXISTS (SELECT 1 FROM gb_entity_sessions ns WHERE ns.entity_id = n.id AND ns.session_id = ${f.sessionId})`
      )
    }
    if (f.kind !== null) {
      clauses.push(sql`EXISTS (SELECT 1 FROM gb_entity_artifacts na JOIN gb_artifacts a ON a.id = na.artifact_id
        WHERE na.entity_id = n.id AND ${sql.and([artifactOfKind("a", f.kind), ...knownBy("a", f)])})`)
    }
    return sql.and(clauses)
  }

  const artifactFilters = (f: ReadFilters): Fragment => {
    const clauses: Array<Fragment> = [...knownBy("a", f)]
    if (f.sessionId !== null) clauses.push(sql`a.session_id = ${f.sessionId}`)
    if (f.kind !== null) clauses.push(artifactOfKind("a", f.kind))
    return sql.and(clauses)
  }

  /**
   * A LIMIT of a read's subquery written into the statement, not bound: SQLite ran the capped
   * link walks five times, the neighbourhood walks three times and the full-text candidates a
   * quarter slower with a bound LIMIT (BENCHMARKS.md). The values are the server's own (caps,
   * candidate counts from the request's limit), so a statement has a few forms, not many.
   */
  const limitOf = (n: number) => sql.literal(String(Math.max(0, Math.floor(n))))

  /** The base table of an alias: entities (n) or facts (e). */
  const baseOf = (alias: "n" | "e") => sql.literal(alias === "n" ? "gb_entities" : "gb_edges")

  return { artifactOfKind, baseOf, knownBy, factFilters, entityFilters, artifactFilters, limitOf }
}

export type ReadFilterSql = ReturnType<typeof makeReadFilters>
