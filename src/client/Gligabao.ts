/**
 * The plain TypeScript client: Promise-based, fetch only, no Effect, so it runs in Node 20+, Bun,
 * Deno and browsers. Requests are the contract's encoded side (types.ts, generated from the
 * OpenAPI document): a field with a server default may be left out. Every answer outside 2xx is a
 * `GligabaoError`; see docs/CLIENTS.md.
 *
 *   const gligabao = new Gligabao({ baseUrl: "http://127.0.0.1:8080", token })
 *   await gligabao.remember({ user_id: "alice", text: "Alice Smith lives in Paris." })
 *   const { facts } = await gligabao.search({ user_id: "alice", query: "Where does Alice live?" })
 */
import { errorText, GligabaoConnectionError, GligabaoError } from "./errors.js"
import { isFinalRunEvent, type RunEvent, SseParser, toRunEvent } from "./events.js"
import type {
  CancelRunRequest,
  ContextRequest,
  ContextResponse,
  Datasets,
  DatasetSchema,
  DatasetSchemaView,
  DeletedDataset,
  EntityStory,
  FactResponse,
  FactView,
  Filters,
  ForgetArtifactResponse,
  ForgetImageResponse,
  ForgetUserResponse,
  GraphExport,
  HardDeletedDataset,
  MergeEntitiesResponse,
  Operations,
  QueryRequest,
  QueryResponse,
  Ready,
  RememberBatchRequest,
  RememberBatchResult,
  RememberQueued,
  RememberRequest,
  RememberRun,
  RunsResponse,
  SearchRequest,
  SearchResponse,
  Sessions
} from "./types.js"

type Query<K extends keyof Operations> = Operations[K]["query"]
type Body<K extends keyof Operations> = Operations[K]["body"]

/** A remember's answer once its run succeeded: a text's response, or an image's. */
export type RememberResult = Operations["remember.remember"]["responses"][200]
/** `rememberBatch` without `wait: true`: one queued run per item, in item order. */
export type RememberBatchQueued = Operations["remember.rememberBatch"]["responses"][202]
/** The entity lookup's 300: a name that means several entities, to ask again by id. */
export type EntityCandidates = Operations["read.findEntity"]["responses"][300]
export type FindEntityParams = Query<"read.findEntity">
/** The export's parameters; `filters` as an object or as its JSON text. */
export type ExportParams = Omit<Query<"read.graph">, "format" | "filters"> & { readonly filters?: Filters | string }
export type RunsParams = Query<"remember.listRuns">
export type InvalidateFactRequest = Body<"correct.invalidateFact">
export type ReopenFactRequest = Body<"correct.reopenFact">
export type MergeEntitiesRequest = Body<"correct.mergeEntities">

/** An id as the server answers it (a number), or as text. */
export type Id = number | string

/** A row of a user's dataset: its id, the user, and the dataset (default main). */
export interface ScopedId {
  readonly id: Id
  readonly user_id: string
  readonly dataset?: string
}

export interface GligabaoOptions {
  /** the server's URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept: `https://host/memory`) */
  readonly baseUrl: string | URL
  /** sent as `Authorization: Bearer <token>` (the server's `[auth]` tokens, docs/CONFIGURATION.md) */
  readonly token?: string | undefined
  /** headers sent with every request */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** the fetch to use (default: the global one), e.g. one with a proxy or retries */
  readonly fetch?: typeof fetch | undefined
}

/** Per call: an abort signal and more headers. */
export interface RequestOptions {
  readonly signal?: AbortSignal | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

export interface RunEventsOptions extends RequestOptions {
  /** resume after this event (a reconnect's `Last-Event-ID`) */
  readonly lastEventId?: string | undefined
  /** how many times a stream that breaks before the run ends is reopened (default 5) */
  readonly reconnects?: number | undefined
}

type QueryValue = string | number | boolean | object | null | undefined

interface Call {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly path: string
  readonly query?: Readonly<Record<string, QueryValue>> | undefined
  readonly body?: unknown
  /** statuses below 400 that are answers, not errors, besides 2xx (the entity lookup's 300) */
  readonly also?: ReadonlyArray<number>
  readonly options?: RequestOptions | undefined
  readonly accept?: string
}

const segment = (value: Id): string => encodeURIComponent(String(value))

/** Query values as the server reads them: text, objects (filters) as JSON; absent and null left out. */
const queryString = (query: Readonly<Record<string, QueryValue>> | undefined): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue
    params.append(name, typeof value === "object" ? JSON.stringify(value) : String(value))
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => {
      clearTimeout(timer)
      resolve()
    }, { once: true })
  })

export class Gligabao {
  private readonly baseUrl: string
  private readonly options: GligabaoOptions

  constructor(options: GligabaoOptions) {
    this.baseUrl = String(options.baseUrl).replace(/\/+$/, "")
    this.options = options
  }

  // --- remember --------------------------------------------------------------------------------

  /**
   * Remembers a text (or an image, or messages). By default the call waits for the run and answers
   * its response; with `wait: false` it answers the queued run at once (watch it with
   * `runEvents` or `run`).
   */
  remember(request: RememberRequest & { readonly wait: false }, options?: RequestOptions): Promise<RememberQueued>
  remember(request: RememberRequest, options?: RequestOptions): Promise<RememberResult>
  remember(request: RememberRequest, options?: RequestOptions): Promise<RememberResult | RememberQueued> {
    return this.json({ method: "POST", path: "/v1/gb/remember", body: request, options })
  }

  /** Queues many texts of one user and dataset; with `wait: true`, answers each item's response or error. */
  rememberBatch(
    request: RememberBatchRequest & { readonly wait: true },
    options?: RequestOptions
  ): Promise<RememberBatchResult>
  rememberBatch(request: RememberBatchRequest, options?: RequestOptions): Promise<RememberBatchQueued>
  rememberBatch(
    request: RememberBatchRequest,
    options?: RequestOptions
  ): Promise<RememberBatchQueued | RememberBatchResult> {
    return this.json({ method: "POST", path: "/v1/gb/remember/batch", body: request, options })
  }

  /** A remember run with its stages (`response` once it succeeded). */
  run(id: Id, options?: RequestOptions): Promise<RememberRun> {
    return this.json({ method: "GET", path: `/v1/gb/runs/${segment(id)}`, options })
  }

  /** A user's runs, newest first; page with `before_id: next_before_id`. */
  runs(params: RunsParams, options?: RequestOptions): Promise<RunsResponse> {
    return this.json({ method: "GET", path: "/v1/gb/runs", query: params, options })
  }

  /** Cancels a queued run (409 once it started). */
  cancelRun(id: Id, request: CancelRunRequest, options?: RequestOptions): Promise<RememberRun> {
    return this.json({ method: "POST", path: `/v1/gb/runs/${segment(id)}/cancel`, body: request, options })
  }

  /**
   * A run's events until it ends: `queued`, `started`, `stage`, `progress`, then exactly one of
   * `succeeded` (the run with its `response`), `failed` or `cancelled`, after which the iteration
   * ends. A run that had already ended gives its final event alone. A stream that breaks before the
   * end is reopened after the server's `retry` delay, resuming after the last event received.
   * Breaking out of the loop closes the connection.
   */
  async *runEvents(id: Id, options: RunEventsOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    const path = `/v1/gb/runs/${segment(id)}/events`
    let lastEventId = options.lastEventId
    let retryMs = 3000
    let reconnects = options.reconnects ?? 5
    for (;;) {
      const headers = lastEventId === undefined ? options.headers : { ...options.headers, "last-event-id": lastEventId }
      const response = await this.send({
        method: "GET",
        path,
        accept: "text/event-stream",
        options: { signal: options.signal, headers }
      })
      if (response.status === 204) {
        // the run has ended: its final state is the run itself
        const run = await this.run(id, options)
        yield { id: undefined, event: run.status as "succeeded" | "failed" | "cancelled", data: run }
        return
      }
      if (response.body === null) throw new GligabaoConnectionError(`GET ${path}`, "the event stream has no body")
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      const parser = new SseParser()
      let broken: unknown = undefined
      try {
        for (;;) {
          let chunk: { readonly done: boolean; readonly value?: Uint8Array | undefined }
          try {
            chunk = await reader.read()
          } catch (cause) {
            if (options.signal?.aborted) throw cause
            broken = cause
            break
          }
          if (chunk.done) break
          for (const message of parser.push(decoder.decode(chunk.value, { stream: true }))) {
            if (message.retry !== undefined) retryMs = message.retry
            const event = toRunEvent(message)
            if (event === undefined) continue
            lastEventId = event.id ?? lastEventId
            yield event
            if (isFinalRunEvent(event)) return
          }
        }
      } finally {
        // also when the caller stops iterating: close the connection
        await reader.cancel().catch(() => undefined)
      }
      if (reconnects-- <= 0) {
        throw new GligabaoConnectionError(`GET ${path}`, broken ?? "the event stream ended before the run")
      }
      await sleep(retryMs, options.signal)
      options.signal?.throwIfAborted()
    }
  }

  /** Waits for a run to end (through its events) and answers it as `run` shows it. */
  async waitForRun(id: Id, options?: RunEventsOptions): Promise<RememberRun> {
    for await (const event of this.runEvents(id, options)) {
      if (isFinalRunEvent(event)) return event.data
    }
    // runEvents ends with a final event or throws
    return this.run(id, options)
  }

  // --- read ------------------------------------------------------------------------------------

  /** Ranked facts, entities and chunks for a text (no LLM). */
  search(request: SearchRequest, options?: RequestOptions): Promise<SearchResponse> {
    return this.json({ method: "POST", path: "/v1/gb/search", body: request, options })
  }

  /** An answer from the stored facts, citing them (one LLM call). */
  query(request: QueryRequest, options?: RequestOptions): Promise<QueryResponse> {
    return this.json({ method: "POST", path: "/v1/gb/query", body: request, options })
  }

  /** A context block for a prompt: facts and entities as text, cut to `max_tokens` (no LLM). */
  context(request: ContextRequest, options?: RequestOptions): Promise<ContextResponse> {
    return this.json({ method: "POST", path: "/v1/gb/context", body: request, options })
  }

  /**
   * An entity's story, found by `id` or by `name`. A name that means several entities answers
   * their candidates (`EntityCandidates`, the server's 300) instead: tell them apart with
   * `isEntityCandidates`, then ask again by id. A name that means none is a 404 `GligabaoError`.
   */
  entity(
    params: FindEntityParams & { readonly id: number; readonly name?: undefined },
    options?: RequestOptions
  ): Promise<EntityStory>
  entity(params: FindEntityParams, options?: RequestOptions): Promise<EntityStory | EntityCandidates>
  entity(params: FindEntityParams, options?: RequestOptions): Promise<EntityStory | EntityCandidates> {
    return this.json({ method: "GET", path: "/v1/gb/entities", query: params, also: [300], options })
  }

  /** A fact: what created it, what restated it, what closed it. */
  fact(params: ScopedId, options?: RequestOptions): Promise<FactView> {
    const { id, ...query } = params
    return this.json({ method: "GET", path: `/v1/gb/facts/${segment(id)}`, query, options })
  }

  /** A dataset's graph as JSON (`exportGraphMl` for GraphML). */
  export(params: ExportParams, options?: RequestOptions): Promise<GraphExport> {
    return this.json({ method: "GET", path: "/v1/gb/graph", query: { ...params, format: "json" }, options })
  }

  /** A dataset's graph as GraphML 1.0 text, for Gephi or yEd. */
  async exportGraphMl(params: ExportParams, options?: RequestOptions): Promise<string> {
    const call: Call = { method: "GET", path: "/v1/gb/graph", query: { ...params, format: "graphml" }, options }
    return (await this.read(call, await this.send({ ...call, accept: "application/graphml+xml" }))).text
  }

  /** A user's datasets with counts. */
  datasets(params: Query<"read.listDatasets">, options?: RequestOptions): Promise<Datasets> {
    return this.json({ method: "GET", path: "/v1/gb/datasets", query: params, options })
  }

  /** A dataset's sessions with counts. */
  sessions(params: Query<"read.listSessions">, options?: RequestOptions): Promise<Sessions> {
    return this.json({ method: "GET", path: "/v1/gb/sessions", query: params, options })
  }

  /** A dataset's schema (docs/SCHEMA.md); the empty schema when it has none. */
  datasetSchema(params: { readonly name: string; readonly user_id: string }, options?: RequestOptions) {
    const { name, ...query } = params
    return this.json<DatasetSchemaView>({
      method: "GET",
      path: `/v1/gb/datasets/${segment(name)}/schema`,
      query,
      options
    })
  }

  /** Replaces a dataset's schema for the remembers that start after it (`{}` removes it). */
  setDatasetSchema(
    params: { readonly name: string; readonly user_id: string },
    schema: DatasetSchema,
    options?: RequestOptions
  ): Promise<DatasetSchemaView> {
    const { name, ...query } = params
    const path = `/v1/gb/datasets/${segment(name)}/schema`
    return this.json({ method: "PUT", path, query, body: schema, options })
  }

  /** A remembered image's bytes and media type. */
  async image(
    params: ScopedId & { readonly dataset: string },
    options?: RequestOptions
  ): Promise<{ readonly contentType: string; readonly bytes: Uint8Array }> {
    const { id, ...query } = params
    const call: Call = { method: "GET", path: `/v1/gb/images/${segment(id)}`, query, options }
    const response = await this.send({ ...call, accept: "image/*" })
    if (!response.ok) await this.read(call, response)
    const bytes = new Uint8Array(await response.arrayBuffer())
    return { contentType: response.headers.get("content-type") ?? "application/octet-stream", bytes }
  }

  // --- forget and correct ----------------------------------------------------------------------

  /** Forgets an artifact, what was derived from it and what it caused (docs/FORGET.md). */
  forgetArtifact(params: ScopedId, options?: RequestOptions): Promise<ForgetArtifactResponse> {
    const { id, ...query } = params
    return this.json({ method: "DELETE", path: `/v1/gb/artifacts/${segment(id)}`, query, options })
  }

  /** Forgets an image: its row, extractions and stored file. */
  forgetImage(params: ScopedId, options?: RequestOptions): Promise<ForgetImageResponse> {
    const { id, ...query } = params
    return this.json({ method: "DELETE", path: `/v1/gb/images/${segment(id)}`, query, options })
  }

  /** Forgets a user: every dataset, run, vector and image file of theirs. */
  forgetUser(userId: string, options?: RequestOptions): Promise<ForgetUserResponse> {
    return this.json({ method: "DELETE", path: `/v1/gb/users/${segment(userId)}`, options })
  }

  /** Deletes a dataset: soft by default (its rows stay), every trace of it with `hard: true`. */
  forgetDataset(
    params: { readonly name: string; readonly user_id: string; readonly hard?: boolean },
    options?: RequestOptions
  ): Promise<DeletedDataset | HardDeletedDataset> {
    const { name, ...query } = params
    return this.json({ method: "DELETE", path: `/v1/gb/datasets/${segment(name)}`, query, options })
  }

  /** Deletes a fact; what it closed is reopened. */
  correctDeleteFact(params: ScopedId, options?: RequestOptions): Promise<ForgetArtifactResponse> {
    const { id, ...query } = params
    return this.json({ method: "DELETE", path: `/v1/gb/facts/${segment(id)}`, query, options })
  }

  /** Deletes an entity with every fact that touches it. */
  correctDeleteEntity(params: ScopedId, options?: RequestOptions): Promise<ForgetArtifactResponse> {
    const { id, ...query } = params
    return this.json({ method: "DELETE", path: `/v1/gb/entities/${segment(id)}`, query, options })
  }

  /** Closes a live fact by hand (`invalid_at`, default now); `correctReopenFact` undoes it. */
  correctInvalidateFact(id: Id, request: InvalidateFactRequest, options?: RequestOptions): Promise<FactResponse> {
    return this.json({ method: "POST", path: `/v1/gb/facts/${segment(id)}/invalidate`, body: request, options })
  }

  /** Undoes a closing by hand. */
  correctReopenFact(id: Id, request: ReopenFactRequest, options?: RequestOptions): Promise<FactResponse> {
    return this.json({ method: "POST", path: `/v1/gb/facts/${segment(id)}/reopen`, body: request, options })
  }

  /** Merges entities into `into`: their facts, links and sessions move (not undoable). */
  correctMergeEntities(request: MergeEntitiesRequest, options?: RequestOptions): Promise<MergeEntitiesResponse> {
    return this.json({ method: "POST", path: "/v1/gb/entities/merge", body: request, options })
  }

  // --- the server ------------------------------------------------------------------------------

  /** Liveness: `{status: "ok"}` while the process answers. */
  health(options?: RequestOptions): Promise<{ readonly status: "ok" }> {
    return this.json({ method: "GET", path: "/healthz", options })
  }

  /** Readiness: the database, its migrations and the vector store; a 503 `GligabaoError` says what is not. */
  ready(options?: RequestOptions): Promise<Ready> {
    return this.json({ method: "GET", path: "/readyz", options })
  }

  // --- the wire --------------------------------------------------------------------------------

  private async send(call: Call): Promise<Response> {
    const label = `${call.method} ${call.path}`
    const headers: Record<string, string> = { accept: call.accept ?? "application/json" }
    if (call.body !== undefined) headers["content-type"] = "application/json"
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`
    Object.assign(headers, this.options.headers, call.options?.headers)
    const init: RequestInit = { method: call.method, headers }
    if (call.body !== undefined) init.body = JSON.stringify(call.body)
    if (call.options?.signal !== undefined) init.signal = call.options.signal
    const fetchFn = this.options.fetch ?? globalThis.fetch
    try {
      return await fetchFn(`${this.baseUrl}${call.path}${queryString(call.query)}`, init)
    } catch (cause) {
      // the caller's own abort stays what fetch threw
      if (call.options?.signal?.aborted) throw cause
      throw new GligabaoConnectionError(label, cause)
    }
  }

  /** Reads a whole answer; a status that is not an answer becomes a `GligabaoError`. */
  private async read(call: Call, response: Response): Promise<{ readonly text: string; readonly body: unknown }> {
    const label = `${call.method} ${call.path}`
    let text: string
    try {
      text = await response.text()
    } catch (cause) {
      if (call.options?.signal?.aborted) throw cause
      throw new GligabaoConnectionError(label, cause)
    }
    const body = parseJson(text)
    if (!response.ok && !(call.also ?? []).includes(response.status)) {
      throw new GligabaoError({
        status: response.status,
        error: errorText(body, text, response.statusText),
        body: body ?? text,
        request: label
      })
    }
    return { text, body }
  }

  private async json<A>(call: Call): Promise<A> {
    const { body, text } = await this.read(call, await this.send(call))
    if (body === undefined) {
      throw new GligabaoConnectionError(`${call.method} ${call.path}`, `the answer is not JSON: ${text.slice(0, 200)}`)
    }
    return body as A
  }
}

/** Whether an `entity` answer is the candidates of an ambiguous name (the server's 300). */
export const isEntityCandidates = (answer: EntityStory | EntityCandidates): answer is EntityCandidates =>
  "candidates" in answer && !("entity" in answer)
