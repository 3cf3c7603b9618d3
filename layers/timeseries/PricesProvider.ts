/**
 * The built-in `prices` provider kind: daily closing prices from a CSV endpoint, by default in
 * the shape of Stooq's free download (docs/TIMESERIES.md):
 *
 *   GET {base_url}/q/d/l/?s={query}&d1={YYYYMMDD}&d2={YYYYMMDD}&i=d
 *
 * answered with `Date,Open,High,Low,Close,Volume` lines (`2025-01-31,247.19,247.19,233.44,236.0,101075000`),
 * or the text `No data` for an unknown symbol or an empty period. Only Date and Close are read
 * (columns found by name, case-insensitive). One series per fetch: `{QUERY}.close`, one point
 * per day at midnight UTC, kept within [from, to]. An HTTP error, a timeout or a body that is
 * not such a CSV is a ProviderFailed.
 */
import { Duration, Effect } from "effect"
import { GLIGABAO_VERSION } from "../../src/Config.js"
import {
  type FetchedSeries,
  ProviderFailed,
  type SeriesPoint,
  type TimeseriesProvider
} from "../../src/services/TimeseriesProviders.js"

export interface PricesProviderOptions {
  readonly name: string
  readonly description: string
  readonly baseUrl: string
  readonly timeoutMs?: number | undefined
}

export const PRICES_DEFAULT_TIMEOUT_MS = 30_000

/** Told to the model with the configured description, so it writes queries the endpoint knows. */
export const PRICES_QUERY_HINT =
  "query: the instrument's symbol as this endpoint names it, such as AAPL.US, ^SPX or EURUSD"

const compactDate = (iso: string): string => iso.slice(0, 10).replaceAll("-", "")

/** The URL of one fetch. */
export const pricesUrl = (baseUrl: string, query: string, from: string, to: string): string => {
  const params = new URLSearchParams({ s: query, d1: compactDate(from), d2: compactDate(to), i: "d" })
  return `${baseUrl.replace(/\/+$/, "")}/q/d/l/?${params}`
}

/** The series key of a query: case-insensitive symbols make one series. */
export const pricesKey = (query: string): string => `${query.trim().toUpperCase()}.close`

const DATE = /^\d{4}-\d{2}-\d{2}$/

/**
 * The daily closes of a CSV body within [from, to] (dates compared by day), or undefined when
 * the body is not a CSV with Date and Close columns. `No data` (any case) is no points.
 */
export const parsePricesCsv = (body: string, from: string, to: string): ReadonlyArray<SeriesPoint> | undefined => {
  const lines = body.replace(/^\uFEFF/, "").split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "")
  if (lines.length === 0 || /^no data/i.test(lines[0]!)) return []
  const header = lines[0]!.split(",").map((h) => h.trim().toLowerCase())
  const dateAt = header.indexOf("date")
  const closeAt = header.indexOf("close")
  if (dateAt < 0 || closeAt < 0) return undefined
  const [fromDay, toDay] = [from.slice(0, 10), to.slice(0, 10)]
  const points: Array<SeriesPoint> = []
  for (const line of lines.slice(1)) {
    const cells = line.split(",")
    const day = cells[dateAt]?.trim() ?? ""
    const close = Number(cells[closeAt]?.trim() ?? "")
    if (!DATE.test(day) || !Number.isFinite(close) || cells[closeAt]?.trim() === "") continue
    if (day < fromDay || day > toDay) continue
    points.push({ ts: `${day}T00:00:00.000Z`, value: close })
  }
  return points.sort((a, b) => (a.ts < b.ts ? -1 : 1))
}

const oneLine = (text: string, max = 200): string => text.replace(/\s+/g, " ").trim().slice(0, max)

export const makePricesProvider = (options: PricesProviderOptions): TimeseriesProvider => {
  const timeoutMs = options.timeoutMs ?? PRICES_DEFAULT_TIMEOUT_MS
  const failed = (message: string) => new ProviderFailed({ message: `${options.name}: ${message}` })

  const fetchSeries = (
    query: string,
    from: string,
    to: string
  ): Effect.Effect<ReadonlyArray<FetchedSeries>, ProviderFailed> =>
    Effect.tryPromise({
      try: (signal) =>
        fetch(pricesUrl(options.baseUrl, query, from, to), {
          signal,
          headers: { "user-agent": `gligabao/${GLIGABAO_VERSION}`, accept: "text/csv, text/plain;q=0.9, */*;q=0.1" }
        }).then(async (res) => ({ status: res.status, body: await res.text() })),
      catch: (e) => failed(`request failed: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => failed(`timed out after ${timeoutMs}ms`)
      }),
      Effect.flatMap(({ body, status }) => {
        if (status !== 200) return Effect.fail(failed(`HTTP ${status}: ${oneLine(body)}`))
        const points = parsePricesCsv(body, from, to)
        if (points === undefined) {
          return Effect.fail(failed(`the answer is not a CSV with Date and Close columns: ${oneLine(body, 80)}`))
        }
        return Effect.succeed([{ key: pricesKey(query), points }])
      }),
      Effect.withSpan("TimeseriesProvider.fetch", { attributes: { provider: options.name, kind: "prices" } })
    )

  return {
    name: options.name,
    description: `${options.description} (${PRICES_QUERY_HINT})`,
    fetch: fetchSeries
  }
}
