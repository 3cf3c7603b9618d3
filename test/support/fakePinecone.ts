import {
  type FakeHandler,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeServer
} from "./fakeLlmServer.js"

export type { FakeHandler, FakeReply, RecordedRequest } from "./fakeLlmServer.js"

/** An error in Pinecone's shape: `{code, message, details}` (code is the gRPC status number). */
export const pineconeError = (status: number, message: string, headers: Record<string, string> = {}): FakeReply => ({
  status,
  headers,
  json: { code: GRPC_CODES[status] ?? 2, message, details: [] }
})

const GRPC_CODES: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 429: 8, 500: 13, 503: 14 }

interface StoredVector {
  readonly id: string
  readonly values: ReadonlyArray<number>
  readonly metadata?: Record<string, unknown>
}

export interface FakePineconeOptions {
  readonly apiKey?: string
  /** the index's dimension: vectors of another length are refused as Pinecone does */
  readonly dimension?: number
  readonly latencyMs?: number
}

export interface FakePinecone extends FakeServer {
  /** namespace -> id -> vector, as stored */
  readonly namespaces: Map<string, Map<string, StoredVector>>
}

/** The limits Pinecone enforces on the data plane. */
const MAX_UPSERT_RECORDS = 1000
const MAX_BODY_BYTES = 2 * 1024 * 1024
const MAX_TOP_K = 10_000
const MAX_DELETE_IDS = 1000

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/**
 * A fake Pinecone index host (data plane only): `POST /vectors/upsert`, `POST /query`,
 * `POST /vectors/delete`, with the `Api-Key` check, namespaces, cosine scores and the
 * request limits. Give `url` to the SDK as the index host. Enqueue replies (e.g.
 * `pineconeError(429, ...)`) or set a handler to script failures.
 */
export const startFakePinecone = async (options: FakePineconeOptions = {}): Promise<FakePinecone> => {
  const apiKey = options.apiKey ?? "pc-test-key"
  const namespaces = new Map<string, Map<string, StoredVector>>()

  const checkDimension = (values: ReadonlyArray<number>): string | undefined =>
    options.dimension !== undefined && values.length !== options.dimension
      ? `Vector dimension ${values.length} does not match the dimension of the index ${options.dimension}`
      : undefined

  const upsert = (body: any): FakeReply => {
    const vectors: unknown = body?.vectors
    if (!Array.isArray(vectors) || vectors.length === 0) return pineconeError(400, "No vectors provided")
    if (vectors.length > MAX_UPSERT_RECORDS) {
      return pineconeError(400, `Batch size exceeds ${MAX_UPSERT_RECORDS}. Upserted vectors count: ${vectors.length}`)
    }
    for (const vector of vectors) {
      if (typeof vector?.id !== "string" || vector.id === "" || !Array.isArray(vector.values)) {
        return pineconeError(400, "Invalid request: every vector needs an id and values")
      }
      const wrong = checkDimension(vector.values)
      if (wrong !== undefined) return pineconeError(400, wrong)
      for (const value of Object.values(vector.metadata ?? {})) {
        if (value === null) {
          return pineconeError(400, "Metadata value must be a string, number, boolean or list of strings, got 'null'")
        }
      }
    }
    const namespace = typeof body.namespace === "string" ? body.namespace : ""
    const stored = namespaces.get(namespace) ?? new Map<string, StoredVector>()
    for (const vector of vectors) {
      stored.set(vector.id, { id: vector.id, values: vector.values, metadata: vector.metadata })
    }
    namespaces.set(namespace, stored)
    return { json: { upsertedCount: vectors.length } }
  }

  const query = (body: any): FakeReply => {
    if (!Number.isInteger(body?.topK) || body.topK < 1 || body.topK > MAX_TOP_K) {
      return pineconeError(400, `Invalid request: topK must be between 1 and ${MAX_TOP_K}`)
    }
    if (!Array.isArray(body.vector)) return pineconeError(400, "Invalid request: query by vector is required here")
    const wrong = checkDimension(body.vector)
    if (wrong !== undefined) return pineconeError(400, wrong)
    const namespace = typeof body.namespace === "string" ? body.namespace : ""
    const matches = [...(namespaces.get(namespace)?.values() ?? [])]
      .map((stored) => ({
        id: stored.id,
        score: cosine(body.vector, stored.values),
        values: body.includeValues === true ? stored.values : [],
        ...(body.includeMetadata === true && stored.metadata !== undefined ? { metadata: stored.metadata } : {})
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, body.topK)
    return { json: { matches, namespace, usage: { readUnits: 1 } } }
  }

  const remove = (body: any): FakeReply => {
    const namespace = typeof body?.namespace === "string" ? body.namespace : ""
    if (body?.deleteAll === true) {
      namespaces.delete(namespace)
      return { json: {} }
    }
    if (!Array.isArray(body?.ids)) return pineconeError(400, "Invalid request: ids, deleteAll or filter is required")
    if (body.ids.length > MAX_DELETE_IDS) {
      return pineconeError(400, `Invalid request: at most ${MAX_DELETE_IDS} ids can be deleted at once`)
    }
    const stored = namespaces.get(namespace)
    for (const id of body.ids) stored?.delete(id)
    return { json: {} }
  }

  const defaultHandler: FakeHandler = (request: RecordedRequest) => {
    if (request.headers["api-key"] !== apiKey) return pineconeError(401, "Invalid API Key")
    if (Buffer.byteLength(request.rawBody) > MAX_BODY_BYTES) {
      return pineconeError(
        400,
        `Request size ${Buffer.byteLength(request.rawBody)} exceeds the limit of ${MAX_BODY_BYTES} bytes`
      )
    }
    switch (`${request.method} ${request.path}`) {
      case "POST /vectors/upsert":
        return upsert(request.body)
      case "POST /query":
        return query(request.body)
      case "POST /vectors/delete":
        return remove(request.body)
      case "POST /describe_index_stats":
        return { json: { namespaces: {}, dimension: 0, indexFullness: 0, totalRecordCount: 0 } }
      default:
        return pineconeError(404, `Not found: ${request.method} ${request.path}`)
    }
  }

  const server = await startFakeServer({
    defaultHandler,
    requestIdHeader: "x-pinecone-request-id",
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {})
  })
  return {
    ...server,
    namespaces,
    reset: () => {
      server.reset()
      namespaces.clear()
    }
  }
}
