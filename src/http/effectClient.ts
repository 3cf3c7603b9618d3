/**
 * `gligabao/effect-client`: a typed client of a gligabao server for Effect applications, derived
 * from the HTTP contract: `const client = yield* makeGligabaoClient("http://127.0.0.1:8080")`,
 * then `client.read.search({ payload: { user_id: "alice", query: "Bob" } })`,
 * `client.read.graph({ urlParams: { user_id: "alice" } })`, `client.remember.getRun({ path: { id: "1" } })`.
 * It needs an `HttpClient` (e.g. `FetchHttpClient.layer`); `{ token }` sends it as a Bearer token.
 *
 * Requests are the encoded side of the contract, as the OpenAPI document has them (the generated
 * types of src/client/types.ts): a field with a server default may be left out, a path id is text,
 * a query's numbers and booleans are sent as their text. The client decodes a request with the endpoint's
 * own schemas first (a bad one fails with a ParseError before anything is sent), then HttpApi's
 * client encodes it. Responses are the response schemas' Types; an error response fails with its
 * `{error}` body. docs/CLIENTS.md.
 */
import {
  HttpApi,
  HttpApiClient,
  type HttpApiEndpoint,
  type HttpApiGroup,
  HttpClient,
  type HttpClientError,
  HttpClientRequest
} from "@effect/platform"
import { Effect, Option, type ParseResult, Schema } from "effect"
import type { Simplify } from "effect/Types"
import type { Operations } from "../client/types.js"
import { GligabaoApi } from "./Api.js"

type Groups = typeof GligabaoApi extends HttpApi.HttpApi<any, infer G, any, any> ? G : never
type ApiError = typeof GligabaoApi extends HttpApi.HttpApi<any, any, infer E, any> ? E : never

/** A part of the request, optional when everything in it is. */
type Part<Name extends string, A> = [A] extends [never] ? {}
  : {} extends A ? { readonly [K in Name]?: A }
  : { readonly [K in Name]: A }

type EncodedParts<Op extends Operations[keyof Operations]> =
  & Part<"path", Op["params"]>
  & Part<"urlParams", Op["query"]>
  & Part<"headers", Op["headers"]>
  & Part<"payload", Op["body"]>

/** The request of operation `Key` (`<group>.<endpoint>`, the document's operationId), encoded. */
export type EncodedRequest<Key extends keyof Operations> = keyof EncodedParts<Operations[Key]> extends never ? void
  : Simplify<EncodedParts<Operations[Key]>>

type Method<Key extends string, Endpoint, GroupError> = [Endpoint] extends [
  HttpApiEndpoint.HttpApiEndpoint<
    infer _Name,
    infer _Method,
    infer _Path,
    infer _UrlParams,
    infer _Payload,
    infer _Headers,
    infer Success,
    infer Failure,
    infer _R,
    infer _RE
  >
] ? (
    request: Key extends keyof Operations ? EncodedRequest<Key>
      : HttpApiEndpoint.HttpApiEndpoint.ClientRequest<_Path, _UrlParams, _Payload, _Headers, false>
  ) => Effect.Effect<
    Success,
    Failure | GroupError | ApiError | HttpClientError.HttpClientError | ParseResult.ParseError
  > :
  never

type GroupClient<Group> = Group extends HttpApiGroup.HttpApiGroup<infer Name, infer Endpoints, infer GroupError> ? {
    readonly [Endpoint in Endpoints as HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>]: Method<
      `${Name}.${HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>}`,
      Endpoint,
      GroupError
    >
  }
  : never

/** The client's type, for signatures in your own code. */
export type GligabaoClient = {
  readonly [Group in Groups as HttpApiGroup.HttpApiGroup.Name<Group>]: GroupClient<Group>
}

type AnySchema = Schema.Schema<any, any, never>

interface EndpointSchemas {
  readonly path: Option.Option<AnySchema>
  readonly urlParams: Option.Option<AnySchema>
  readonly headers: Option.Option<AnySchema>
  readonly payload: Option.Option<AnySchema>
}

/** Each endpoint's request schemas, by group and name. */
const endpointSchemas = (): ReadonlyMap<string, EndpointSchemas> => {
  const out = new Map<string, EndpointSchemas>()
  HttpApi.reflect(GligabaoApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group }) => {
      const any = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      out.set(`${group.identifier}.${endpoint.name}`, {
        path: any.pathSchema as Option.Option<AnySchema>,
        urlParams: any.urlParamsSchema as Option.Option<AnySchema>,
        headers: any.headersSchema as Option.Option<AnySchema>,
        payload: any.payloadSchema as Option.Option<AnySchema>
      })
    }
  })
  return out
}

const withOptions = (options: GligabaoClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const token = options.token
  const authorized = token === undefined
    ? client
    : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token))
  return options.transformClient === undefined ? authorized : options.transformClient(authorized)
}

/** Path, query and header values travel as text: a number or boolean given for one is sent as its text. */
const asText = (values: unknown): unknown =>
  typeof values === "object" && values !== null
    ? Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, typeof v === "number" || typeof v === "boolean" ? String(v) : v])
    )
    : values

const decodePart = (schema: Option.Option<AnySchema>, value: unknown, text: boolean) =>
  Option.isNone(schema) || value === undefined
    ? Effect.succeed(value)
    : Schema.decodeUnknown(schema.value)(text ? asText(value) : value)

/** The request as HttpApi's client takes it (the schemas' Types), from the encoded one. */
const decodeRequest = (schemas: EndpointSchemas, request: any) =>
  Effect.gen(function*() {
    if (request === undefined || request === null) return request
    const decoded: Record<string, unknown> = { ...request }
    const parts = [["path", true], ["urlParams", true], ["headers", true], ["payload", false]] as const
    for (const [part, text] of parts) {
      if (part in request || Option.isSome(schemas[part])) {
        decoded[part] = yield* decodePart(schemas[part], request[part] ?? (part === "payload" ? undefined : {}), text)
      }
    }
    return decoded
  })

export interface GligabaoClientOptions {
  /** sent as `Authorization: Bearer <token>` (the server's `[auth]` tokens) */
  readonly token?: string | undefined
  /** e.g. `HttpClient.retryTransient(...)`, applied after the token */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/** A client of the server at `baseUrl` that takes encoded requests. Needs an `HttpClient`. */
export const makeGligabaoClient = (baseUrl: string | URL, options: GligabaoClientOptions = {}) =>
  Effect.map(
    HttpApiClient.make(GligabaoApi, { baseUrl, transformClient: withOptions(options) }),
    (client): GligabaoClient => {
      const schemas = endpointSchemas()
      const groups: Record<string, Record<string, unknown>> = {}
      for (
        const [group, methods] of Object.entries(
          client as unknown as Record<string, Record<string, (request?: unknown) => any>>
        )
      ) {
        groups[group] = Object.fromEntries(
          Object.entries(methods).map(([name, method]) => {
            const endpoint = schemas.get(`${group}.${name}`)
            return [
              name,
              endpoint === undefined
                ? method
                : (request?: unknown) => Effect.flatMap(decodeRequest(endpoint, request), (decoded) => method(decoded))
            ]
          })
        )
      }
      return groups as unknown as GligabaoClient
    }
  )
