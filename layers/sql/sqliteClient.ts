/**
 * The SQLite client of gligabao's own connections: @effect/sql-sqlite-node's `make`, with two
 * changes measured in BENCHMARKS.md (issue 39).
 *
 * - Prepared statements are kept in a plain Map of at most `prepareCacheSize`, the least
 *   recently used dropped first. The library's cache is an Effect `Cache` with a time to live:
 *   about 30 runtime operations on every statement, a third of what a statement costs the
 *   server beside the SQL itself. (A statement is not stale after a schema change: SQLite
 *   prepares it again by itself.)
 * - `SqliteScript` runs several statements in one call (better-sqlite3's `exec`), for work that
 *   is a fixed sequence of writes (the full-text flush): one call instead of one each.
 * - With `statementSpans: false` (the server when no trace is exported) a statement runs in
 *   one step on the connection, without the library's `sql.execute` span and scope around it:
 *   about 80 runtime operations and two copies of the fiber's context a statement. When the
 *   connection is free (no other fiber's transaction holds it) or the fiber's own transaction
 *   holds it, that step is one synchronous call: better-sqlite3 runs to the end before any other
 *   fiber runs, so taking and releasing the semaphore around it (about 20 operations) guards
 *   nothing.
 *
 * Everything else is the library's: the same SqlClient (statements, transactions, spans), one
 * connection behind a semaphore, WAL unless disabled, safe integers when asked.
 */
import type * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, SqlError, Statement } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Connection } from "@effect/sql/SqlConnection"
import Sqlite from "better-sqlite3"
import { Context, Effect, Option, Scope } from "effect"

const ATTR_DB_SYSTEM_NAME = "db.system.name"
const PREPARE_CACHE_SIZE = 200

/** Runs a script of statements without parameters on the client's connection. */
export class SqliteScript extends Context.Tag("gligabao/SqliteScript")<SqliteScript, {
  /**
   * `script` (statements separated by `;`, no parameters, no rows read) in one call: inside a
   * transaction of this client, as part of it; outside one, as a transaction of its own.
   */
  readonly exec: (script: string) => Effect.Effect<void, SqlError.SqlError>
}>() {}

type Prepared = Sqlite.Statement<Array<unknown>, unknown>

/** A Map used as a least-recently-used cache of prepared statements. */
const statementCache = (db: Sqlite.Database, capacity: number) => {
  const statements = new Map<string, Prepared>()
  return {
    get: (sql: string): Prepared => {
      const found = statements.get(sql)
      if (found !== undefined) {
        // most recently used last: Map keeps insertion order
        statements.delete(sql)
        statements.set(sql, found)
        return found
      }
      const statement = db.prepare(sql)
      statements.set(sql, statement)
      if (statements.size > capacity) statements.delete(statements.keys().next().value!)
      return statement
    },
    clear: () => statements.clear()
  }
}

const failure = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** What this client adds to the library's configuration. */
export interface SqliteClientOptions extends SqliteClient.SqliteClientConfig {
  /** a `sql.execute` span (and the library's scope) around every statement; default true */
  readonly statementSpans?: boolean | undefined
}

/** The client's connection, run in one synchronous step when nothing else holds it. */
interface DirectConnection {
  readonly connection: Connection
  /** the connection behind the client's semaphore (a wait while a transaction holds it) */
  readonly acquirer: Effect.Effect<Connection>
  /** whether no transaction holds the connection now */
  readonly free: () => boolean
  /** runs the statement at once, in the caller's step */
  readonly now: (
    safeIntegers: boolean,
    sql: string,
    params: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<any>, SqlError.SqlError>
}

/**
 * `client` whose statements run straight on the connection: in one synchronous step when the
 * fiber's transaction or nobody holds it, else behind the client's semaphore, as the library's
 * acquirer does (another connection's transaction: on that one). A statement delegates
 * everything else (fragments, compile, values, raw, stream) to the library's; with a statement
 * transformer set (`Statement.withTransformer`) it runs the library's way.
 */
const withoutStatementSpans = (
  client: SqlClient.SqlClient,
  direct: DirectConnection,
  transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
): SqlClient.SqlClient => {
  const { acquirer, connection, free, now } = direct
  const oneStep = (safeIntegers: boolean, sql: string, params: ReadonlyArray<unknown>) => {
    const rows = now(safeIntegers, sql, params)
    return transformRows === undefined ? rows : Effect.map(rows, transformRows)
  }
  const directly = <A>(statement: Statement.Statement<A>): Statement.Statement<A> => {
    const fast = Object.create(statement) as Statement.Statement<A> & { commit: () => Effect.Effect<unknown, unknown> }
    fast.commit = () =>
      Effect.withFiberRuntime((fiber) => {
        if (Option.isSome(fiber.getFiberRef(Statement.currentTransformer))) {
          return (statement as unknown as { commit: () => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> }).commit()
        }
        const [sql, params] = statement.compile()
        const context = fiber.currentContext
        const tx = Context.getOption(context, SqlClient.TransactionConnection)
        if (Option.isSome(tx)) {
          const held = tx.value[0] as unknown as Connection
          return held === connection
            ? oneStep(Context.get(context, SqlClient.SafeIntegers), sql, params)
            : held.execute(sql, params, transformRows)
        }
        return free()
          ? oneStep(Context.get(context, SqlClient.SafeIntegers), sql, params)
          : Effect.flatMap(acquirer, (c) => c.execute(sql, params, transformRows))
      })
    return fast
  }
  const library = client as unknown as (...args: Array<unknown>) => unknown
  const sql = Object.assign(
    (...args: Array<unknown>) => {
      const made = library(...args)
      return Effect.isEffect(made) ? directly(made as Statement.Statement<unknown>) : made
    },
    client,
    {
      unsafe: <A extends object>(text: string, params?: ReadonlyArray<unknown>) =>
        directly(client.unsafe<A>(text, params))
    }
  ) as unknown as SqlClient.SqlClient
  ;(sql as { safe: unknown }).safe = sql
  return sql
}

export const makeSqliteClient = (
  options: SqliteClientOptions
): Effect.Effect<
  SqliteClient.SqliteClient & { readonly script: SqliteScript["Type"] },
  never,
  Scope.Scope | Reactivity.Reactivity
> =>
  Effect.gen(function*() {
    const compiler = Statement.makeCompilerSqlite(options.transformQueryNames)
    const transformRows = options.transformResultNames
      ? Statement.defaultTransforms(options.transformResultNames).array
      : undefined
    const scope = yield* Effect.scope
    const db = new Sqlite(options.filename, { readonly: options.readonly ?? false })
    yield* Scope.addFinalizer(scope, Effect.sync(() => db.close()))
    if (options.disableWAL !== true) db.pragma("journal_mode = WAL")
    const cache = statementCache(db, options.prepareCacheSize ?? PREPARE_CACHE_SIZE)

    const execute = (statement: Prepared, safeIntegers: boolean, params: ReadonlyArray<unknown>, raw: boolean) => {
      if (safeIntegers) statement.safeIntegers(true)
      try {
        if (statement.reader) return Effect.succeed(statement.all(...params) as ReadonlyArray<any>)
        const result = statement.run(...params)
        return Effect.succeed(raw ? (result as unknown as ReadonlyArray<any>) : [])
      } catch (cause) {
        return Effect.fail(failure("Failed to execute statement")(cause))
      }
    }
    const runStatement = (statement: Prepared, params: ReadonlyArray<unknown>, raw: boolean) =>
      Effect.withFiberRuntime<ReadonlyArray<any>, SqlError.SqlError>((fiber) =>
        execute(statement, Context.get(fiber.currentContext, SqlClient.SafeIntegers), params, raw)
      )
    const now = (safeIntegers: boolean, sql: string, params: ReadonlyArray<unknown>) => {
      let statement: Prepared
      try {
        statement = cache.get(sql)
      } catch (cause) {
        return Effect.fail(failure("Failed to prepare statement ")(cause))
      }
      return execute(statement, safeIntegers, params, false)
    }
    const prepared = (sql: string) =>
      Effect.try({ try: () => cache.get(sql), catch: failure("Failed to prepare statement ") })
    const run = (sql: string, params: ReadonlyArray<unknown>, raw = false) =>
      Effect.flatMap(prepared(sql), (s) => runStatement(s, params, raw))
    const runValues = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.flatMap(prepared(sql), (statement) =>
        Effect.try({
          try: () => {
            if (!statement.reader) {
              statement.run(...params)
              return []
            }
            statement.raw(true)
            try {
              return statement.all(...params) as ReadonlyArray<ReadonlyArray<unknown>>
            } finally {
              statement.raw(false)
            }
          },
          catch: failure("Failed to execute statement")
        }))

    const connection = {
      execute: (
        sql: string,
        params: ReadonlyArray<unknown>,
        transform?: <A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>
      ) => transform ? Effect.map(run(sql, params), transform) : run(sql, params),
      executeRaw: (sql: string, params: ReadonlyArray<unknown>) => run(sql, params, true),
      executeValues: runValues,
      executeUnprepared: (
        sql: string,
        params: ReadonlyArray<unknown>,
        transform?: <A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>
      ) => {
        const effect = Effect.flatMap(
          Effect.try({ try: () => db.prepare(sql) as Prepared, catch: failure("Failed to prepare statement ") }),
          (s) => runStatement(s, params ?? [], false)
        )
        return transform ? Effect.map(effect, transform) : effect
      },
      executeStream: () => Effect.dieMessage("executeStream not implemented"),
      export: Effect.try({ try: () => db.serialize(), catch: failure("Failed to export database") }),
      backup: (destination: string) =>
        Effect.tryPromise({ try: () => db.backup(destination), catch: failure("Failed to backup database") }),
      loadExtension: (path: string) =>
        Effect.try({
          try: () => {
            db.loadExtension(path)
            cache.clear()
          },
          catch: failure("Failed to load extension")
        })
    }

    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    // transactions open now (0 or 1): only a transaction holds the connection across steps
    let transactions = 0
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          Effect.zipRight(restore(semaphore.take(1)), Effect.sync(() => transactions++)),
          Effect.tap(
            Effect.scope,
            (scope) =>
              Scope.addFinalizer(scope, Effect.zipRight(Effect.sync(() => transactions--), semaphore.release(1)))
          )
        ),
        connection
      )
    )
    const library = yield* SqlClient.make({
      acquirer: acquirer as any,
      compiler,
      transactionAcquirer: transactionAcquirer as any,
      spanAttributes: [
        ...(options.spanAttributes ? Object.entries(options.spanAttributes) : []),
        [ATTR_DB_SYSTEM_NAME, "sqlite"]
      ],
      transformRows
    })
    const client = options.statementSpans === false
      ? withoutStatementSpans(library, {
        connection: connection as unknown as Connection,
        acquirer: acquirer as unknown as Effect.Effect<Connection>,
        free: () => transactions === 0,
        now
      }, transformRows)
      : library

    const exec = (script: string) =>
      Effect.try({ try: () => void db.exec(script), catch: failure("Failed to execute script") })
    const script: SqliteScript["Type"] = {
      // inside this client's transaction the connection is the caller's already; outside, the
      // script takes the connection and is a transaction of its own
      exec: (text) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (tx) =>
          Option.isSome(tx) && tx.value[0] === (connection as unknown)
            ? exec(text)
            : client.withTransaction(exec(text)))
    }

    return Object.assign(client, {
      [SqliteClient.TypeId]: SqliteClient.TypeId as typeof SqliteClient.TypeId,
      config: options,
      export: Effect.flatMap(acquirer, (c) =>
        c.export),
      backup: (destination: string) => Effect.flatMap(acquirer, (c) => c.backup(destination)),
      loadExtension: (path: string) => Effect.flatMap(acquirer, (c) => c.loadExtension(path)),
      script
    }) as unknown as SqliteClient.SqliteClient & { readonly script: SqliteScript["Type"] }
  })

/** The client as the library's layer gives it, and its script runner. */
export const sqliteClientContext = (client: SqliteClient.SqliteClient & { readonly script: SqliteScript["Type"] }) =>
  Context.make(SqliteClient.SqliteClient, client).pipe(
    Context.add(SqlClient.SqlClient, client),
    Context.add(SqliteScript, client.script)
  )
