/**
 * OpenStreetMap Nominatim as the GeoResolver: `GET {base}/search?q=...&format=jsonv2&limit=1&addressdetails=1`.
 * Its usage policy asks for at most one request per second across the application, a
 * User-Agent that identifies it, and caching: requests to one server are spaced across the
 * whole process (not per layer), and answers, an empty one included, are cached. `[]` means
 * nothing matched (unresolved); an HTTP error or timeout is a GeoFailed, not cached, so the
 * next remember tries again.
 */
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { GeoFailed, type GeoPlace, GeoResolver } from "../../src/services/GeoResolver.js"

export interface NominatimOptions {
  readonly baseUrl: string
  readonly userAgent: string
  /** the public server allows at most 1 */
  readonly requestsPerSecond: number
  readonly timeoutMs?: number | undefined
  /** answers kept (least recently stored dropped first) */
  readonly cacheSize?: number | undefined
}

export const NOMINATIM_PROVIDER = "nominatim"
export const NOMINATIM_DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_CACHE_SIZE = 10_000

interface Limiter {
  readonly lock: Effect.Semaphore
  /** the earliest time (Clock millis) the next request may start */
  nextMs: number
}

// One per server origin for the whole process, so two resolvers (or layers) never double the rate.
const limiters = new Map<string, Limiter>()

const limiterFor = (baseUrl: string): Limiter => {
  const key = URL.canParse(baseUrl) ? new URL(baseUrl).origin : baseUrl
  let limiter = limiters.get(key)
  if (limiter === undefined) {
    limiter = { lock: Effect.unsafeMakeSemaphore(1), nextMs: 0 }
    limiters.set(key, limiter)
  }
  return limiter
}

/** Runs `request` in its turn: at most one per `intervalMs`, one at a time. */
const spaced = <A, E>(limiter: Limiter, intervalMs: number, request: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    // capped at one interval, so a clock that moved back (test clocks) never blocks for long
    const wait = Math.min(Math.max(0, limiter.nextMs - now), intervalMs)
    if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
    limiter.nextMs = now + wait + intervalMs
    return yield* request
  })

const str = (u: unknown): string | null => (typeof u === "string" && u !== "" ? u : null)

const coordinate = (
  u: unknown
): number => (typeof u === "number" ? u : typeof u === "string" && u.trim() !== "" ? Number(u) : NaN)

/** The first result of a jsonv2 answer (lat/lon are strings there); undefined when it is not one. */
export const parseNominatim = (body: unknown): Option.Option<GeoPlace> | undefined => {
  if (!Array.isArray(body)) return undefined
  const first: unknown = body[0]
  if (first === undefined) return Option.none()
  if (typeof first !== "object" || first === null) return undefined
  const r = first as Record<string, unknown>
  const latitude = coordinate(r.lat)
  const longitude = coordinate(r.lon)
  if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return undefined
  const address = (typeof r.address === "object" && r.address !== null ? r.address : {}) as Record<string, unknown>
  return Option.some({
    latitude,
    longitude,
    display_name: str(r.display_name) ?? str(r.name) ?? "",
    country: str(address.country),
    country_code: str(address.country_code),
    region: str(address.state) ?? str(address.region) ?? str(address.province) ?? str(address.state_district) ??
      str(address.county)
  })
}

const cacheKey = (query: string) => query.trim().replace(/\s+/g, " ").toLowerCase()

export const makeNominatimResolver = (options: NominatimOptions): GeoResolver["Type"] => {
  const limiter = limiterFor(options.baseUrl)
  const intervalMs = 1000 / options.requestsPerSecond
  const timeoutMs = options.timeoutMs ?? NOMINATIM_DEFAULT_TIMEOUT_MS
  const cacheSize = options.cacheSize ?? DEFAULT_CACHE_SIZE
  const cache = new Map<string, Option.Option<GeoPlace>>()
  const base = options.baseUrl.replace(/\/+$/, "")

  const request = (query: string) =>
    Effect.tryPromise({
      try: (signal) => {
        const params = new URLSearchParams({ q: query, format: "jsonv2", limit: "1", addressdetails: "1" })
        return fetch(`${base}/search?${params}`, {
          signal,
          headers: { "user-agent": options.userAgent, accept: "application/json" }
        }).then(async (res) => ({ status: res.status, body: await res.text() }))
      },
      catch: (e) =>
        new GeoFailed({ message: `nominatim: request failed: ${e instanceof Error ? e.message : String(e)}` })
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => new GeoFailed({ message: `nominatim: timed out after ${timeoutMs}ms` })
      }),
      Effect.flatMap(({ body, status }) => {
        if (status !== 200) {
          return Effect.fail(
            new GeoFailed({ message: `nominatim: HTTP ${status}: ${body.replace(/\s+/g, " ").slice(0, 200)}` })
          )
        }
        let json: unknown
        try {
          json = JSON.parse(body)
        } catch {
          return Effect.fail(new GeoFailed({ message: "nominatim: the answer is not JSON" }))
        }
        const place = parseNominatim(json)
        return place === undefined
          ? Effect.fail(new GeoFailed({ message: "nominatim: the answer is not a list of places" }))
          : Effect.succeed(place)
      })
    )

  const remember = (key: string, place: Option.Option<GeoPlace>) => {
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
    cache.set(key, place)
  }

  const resolve = (query: string) =>
    Effect.suspend(() => {
      const key = cacheKey(query)
      const cached = cache.get(key)
      if (cached !== undefined) return Effect.succeed(cached)
      return limiter.lock.withPermits(1)(
        Effect.suspend(() => {
          // a concurrent lookup of the same query may have answered while this one waited
          const now = cache.get(key)
          if (now !== undefined) return Effect.succeed(now)
          return spaced(limiter, intervalMs, request(query)).pipe(Effect.tap((place) => remember(key, place)))
        })
      )
    }).pipe(Effect.withSpan("GeoResolver.resolve", { attributes: { provider: NOMINATIM_PROVIDER } }))

  return GeoResolver.of({ enabled: true, provider: NOMINATIM_PROVIDER, resolve })
}

/** Nominatim; warns at startup when the User-Agent is the shipped placeholder, which the policy does not accept. */
export const NominatimResolverLive = (options: NominatimOptions): Layer.Layer<GeoResolver> =>
  Layer.effect(
    GeoResolver,
    Effect.gen(function*() {
      if (options.userAgent.includes("example.invalid")) {
        yield* Effect.logWarning(
          "geo.user_agent is the placeholder; Nominatim's usage policy wants one that identifies you"
        )
      }
      return makeNominatimResolver(options)
    })
  )
