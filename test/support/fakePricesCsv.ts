/**
 * A fake daily-prices CSV endpoint in the shape the `prices` provider reads (Stooq's download):
 * `GET /q/d/l/?s=<symbol>&d1=YYYYMMDD&d2=YYYYMMDD&i=d` answers `Date,Open,High,Low,Close,Volume`
 * lines for the days in [d1, d2], or the text `No data` for an unknown symbol or an empty
 * period, as text/csv. Symbols are case-insensitive. Each request is recorded in order;
 * `enqueue` scripts one-shot replies (an HTTP error, an HTML page).
 */
import { type FakeHandler, type FakeReply, type FakeServer, startFakeServer } from "./fakeLlmServer.js"

export type { FakeReply, FakeServer, RecordedRequest } from "./fakeLlmServer.js"

/** Closing prices per symbol: day (YYYY-MM-DD) -> close. */
export type PriceTable = Readonly<Record<string, Readonly<Record<string, number>>>>

const csv = (raw: string): FakeReply => ({ headers: { "content-type": "text/csv" }, raw })

export const csvError = (status: number, body = "Service unavailable"): FakeReply => ({
  status,
  headers: { "content-type": "text/html" },
  raw: `<html><body>${body}</body></html>`
})

const handler = (table: PriceTable): FakeHandler => (request) => {
  const url = new URL(request.path, "http://fake")
  if (request.method !== "GET" || url.pathname !== "/q/d/l/") {
    return { status: 404, headers: { "content-type": "text/plain" }, raw: "Not found" }
  }
  const [symbol, d1, d2, interval] = ["s", "d1", "d2", "i"].map((k) => url.searchParams.get(k) ?? "")
  if (interval !== "d" || !/^\d{8}$/.test(d1!) || !/^\d{8}$/.test(d2!)) {
    return { status: 400, headers: { "content-type": "text/plain" }, raw: "Bad request" }
  }
  const day = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6, 8)}`
  const [from, to] = [day(d1!), day(d2!)]
  const entry = Object.entries(table).find(([s]) => s.toLowerCase() === symbol!.toLowerCase())?.[1] ?? {}
  const days = Object.keys(entry).filter((d) => d >= from && d <= to).sort()
  if (days.length === 0) return csv("No data")
  const lines = days.map((d) => {
    const close = entry[d]!
    return `${d},${close},${close + 1},${close - 1},${close},1000000`
  })
  return csv(`Date,Open,High,Low,Close,Volume\r\n${lines.join("\r\n")}\r\n`)
}

/** `url` is the provider's base_url. */
export const startFakePricesCsv = (table: PriceTable = {}): Promise<FakeServer> =>
  startFakeServer({ defaultHandler: handler(table), requestIdHeader: "x-request-id" })
