import type { Fragment } from "@effect/sql/Statement"
import { Context, type Effect } from "effect"

/** The two indexed sides: entities (name and description) and facts (description). */
export type FullTextSide = "entities" | "edges"

/**
 * The full-text index of the SQL storage: which of a dataset's rows match words, and how well,
 * with statistics that are the dataset's own (one dataset's writes never reorder another's
 * search). SQLite keeps it in FTS5 tables fed by a change queue; PostgreSQL in a tsvector
 * column its triggers keep, so there most methods do nothing.
 */
export class FullTextIndex extends Context.Tag("gligabao/FullTextIndex")<
  FullTextIndex,
  {
    /**
     * The body of a CTE `scored(id, score)`: every row of the dataset's side matching any of
     * the terms, with its score (higher better). A fragment, so that the caller joins it to its
     * filters and top-N in one statement.
     */
    readonly scored: (side: FullTextSide, datasetId: number, terms: ReadonlyArray<string>) => Effect.Effect<Fragment>
    /**
     * Applies what was queued since the last flush (SQLite; nothing on PostgreSQL). A pre-commit
     * hook of `Database.withTransaction`, so a read never sees rows the index lacks.
     */
    readonly flush: Effect.Effect<void>
    /** How many rows of the dataset's side the index holds. */
    readonly rows: (side: FullTextSide, datasetId: number) => Effect.Effect<number>
    /**
     * Merges the index so that deleted terms leave its files (SQLite's FTS5 'optimize'; nothing
     * on PostgreSQL). Outside a transaction.
     */
    readonly compact: Effect.Effect<void>
    /** After a dataset's rows were deleted (erase): their index entries and its statistics go. */
    readonly drop: (datasetId: number) => Effect.Effect<void>
  }
>() {}
