/**
 * The read filters of SearchRepo as SQL: time, session and kind conditions on facts (alias e),
 * entities (alias n) and artifacts (alias a), and the request's `filters` (src/domain/Filters.ts:
 * metadata, kind, session and storage time of a supporting text, relations, types), shared by the
 * full-text match and the row reads. Every condition is a test of the row at hand through primary
 * keys (a fact's links, an artifact, its metadata key), after the index that picked the rows.
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { FilterGroup, MetadataTest, TextConditions } from "../../../../src/domain/Filters.js"
import type { MetadataValue } from "../../../../src/domain/Metadata.js"
import type { ReadFilters } from "../../../../src/services/SearchRepo.js"

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

  /** One metadata key's test on the row `m` of gb_artifact_metadata. */
  const valueTest = (t: MetadataTest): Fragment => {
    const eq = (values: ReadonlyArray<MetadataValue>): Array<Fragment> => {
      const of = <A extends MetadataValue>(type: string) => values.filter((v): v is A => typeof v === type)
      const strings = of<string>("string")
      const numbers = of<number>("number")
      const booleans = of<boolean>("boolean").map(String)
      return [
        ...(strings.length === 0 ? [] : [sql`(m.value_type = 'string' AND m.text_value IN ${sql.in(strings)})`]),
        ...(numbers.length === 0 ? [] : [sql`(m.value_type = 'number' AND m.num_value IN ${sql.in(numbers)})`]),
        ...(booleans.length === 0 ? [] : [sql`(m.value_type = 'boolean' AND m.text_value IN ${sql.in(booleans)})`])
      ]
    }
    if (t.op === "eq") return sql.or(eq([t.value]))
    if (t.op === "in") return sql.or(eq(t.values))
    // a time is a string whose num_value holds its epoch milliseconds
    return sql.and([
      sql`m.value_type = ${t.on === "number" ? "number" : "string"}`,
      sql`m.num_value IS NOT NULL`,
      ...(t.gte === null ? [] : [sql`m.num_value >= ${t.gte}`]),
      ...(t.lte === null ? [] : [sql`m.num_value <= ${t.lte}`])
    ])
  }

  /** The artifact `alias` passes the text conditions, together (each metadata key by its primary key). */
  const textPasses = (alias: string, t: TextConditions, f: ReadFilters): Array<Fragment> => {
    const a = sql.literal(alias)
    return [
      ...t.metadata.map((test) =>
        sql`EXISTS (SELECT 1 FROM gb_artifact_metadata m WHERE m.artifact_id = ${a}.id AND m.key = ${test.key}
          AND ${valueTest(test)})`
      ),
      ...(t.kind === null ? [] : [artifactOfKind(alias, t.kind)]),
      ...(t.sessionId === null ? [] : [sql`${a}.session_id = ${t.sessionId}`]),
      ...(t.createdAfter === null ? [] : [sql`${a}.created_at >= ${t.createdAfter}`]),
      ...(t.createdBefore === null ? [] : [sql`${a}.created_at < ${t.createdBefore}`]),
      ...knownBy(alias, f)
    ]
  }

  /** All of a request's filters (`conditions`), given how one group reads on the row. */
  const conditionsOn = (f: ReadFilters, group: (g: FilterGroup) => Array<Fragment>): Array<Fragment> => {
    const c = f.conditions
    if (c === undefined || c === null) return []
    const all = group(c.all)
    return c.any.length === 0 ? all : [...all, sql.or(c.any.map((g) => sql.and(group(g))))]
  }

  /** A fact (alias e): its relation, an endpoint's type, and one supporting text passing the text conditions. */
  const factGroup = (f: ReadFilters) => (g: FilterGroup): Array<Fragment> => [
    ...(g.relations === null ? [] : [sql`e.relation IN ${sql.in(g.relations)}`]),
    ...(g.entityTypes === null ? [] : [
      sql`(EXISTS (SELECT 1 FROM gb_entities ts WHERE ts.id = e.source_id AND ts.type IN ${sql.in(g.entityTypes)})
        OR EXISTS (SELECT 1 FROM gb_entities tt WHERE tt.id = e.target_id AND tt.type IN ${sql.in(g.entityTypes)}))`
    ]),
    ...(g.text === null ? [] : [
      sql`EXISTS (SELECT 1 FROM gb_edge_artifacts fa JOIN gb_artifacts a ON a.id = fa.artifact_id
        WHERE fa.edge_id = e.id AND ${sql.and(textPasses("a", g.text, f))})`
    ])
  ]

  /** An entity (alias n): its type, a fact of the relation touching it, one supporting text passing. */
  const entityGroup = (f: ReadFilters) => (g: FilterGroup): Array<Fragment> => [
    ...(g.entityTypes === null ? [] : [sql`n.type IN ${sql.in(g.entityTypes)}`]),
    ...(g.relations === null ? [] : [
      sql`(EXISTS (SELECT 1 FROM gb_edges rs WHERE rs.source_id = n.id AND rs.relation IN ${sql.in(g.relations)})
        OR EXISTS (SELECT 1 FROM gb_edges rt WHERE rt.target_id = n.id AND rt.relation IN ${sql.in(g.relations)}))`
    ]),
    ...(g.text === null ? [] : [
      sql`EXISTS (SELECT 1 FROM gb_entity_artifacts na2 JOIN gb_artifacts a ON a.id = na2.artifact_id
        WHERE na2.entity_id = n.id AND ${sql.and(textPasses("a", g.text, f))})`
    ])
  ]

  /** An artifact (alias a): the text conditions (types and relations do not apply to a text). */
  const artifactGroup = (f: ReadFilters) => (g: FilterGroup): Array<Fragment> =>
    g.text === null ? [] : textPasses("a", g.text, f)

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
    clauses.push(...conditionsOn(f, factGroup(f)))
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
    clauses.push(...conditionsOn(f, entityGroup(f)))
    return sql.and(clauses)
  }

  const artifactFilters = (f: ReadFilters): Fragment => {
    const clauses: Array<Fragment> = [...knownBy("a", f)]
    if (f.sessionId !== null) clauses.push(sql`a.session_id = ${f.sessionId}`)
    if (f.kind !== null) clauses.push(artifactOfKind("a", f.kind))
    clauses.push(...conditionsOn(f, artifactGroup(f)))
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
