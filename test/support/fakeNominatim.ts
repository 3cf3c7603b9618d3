/**
 * A fake Nominatim `/search` (guides/external-apis.md section 3): jsonv2 results with lat, lon
 * and boundingbox as strings, `[]` for an unknown query, a User-Agent required as the usage
 * policy does; each request's arrival is recorded in order.
 */
import { type FakeHandler, type FakeReply, type FakeServer, startFakeServer } from "./fakeLlmServer.js"

export type { FakeReply, FakeServer, RecordedRequest } from "./fakeLlmServer.js"

export interface FakePlace {
  readonly lat: number
  readonly lon: number
  readonly name: string
  readonly display_name: string
  readonly type?: string
  readonly address?: Readonly<Record<string, string>>
}

/** One jsonv2 result as Nominatim writes it (numbers as strings, 7 decimals). */
export const nominatimResult = (place: FakePlace, id = 1) => ({
  place_id: 100000 + id,
  licence: "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
  osm_type: "node",
  osm_id: 2000 + id,
  lat: place.lat.toFixed(7),
  lon: place.lon.toFixed(7),
  category: "place",
  type: place.type ?? "city",
  place_rank: 16,
  importance: 0.8,
  addresstype: place.type ?? "city",
  name: place.name,
  display_name: place.display_name,
  ...(place.address === undefined ? {} : { address: place.address }),
  boundingbox: [
    (place.lat - 0.1).toFixed(7),
    (place.lat + 0.1).toFixed(7),
    (place.lon - 0.1).toFixed(7),
    (place.lon + 0.1).toFixed(7)
  ]
})

export const nominatimError = (status: number, message: string): FakeReply =>
  status === 503 ?
    {
      status,
      headers: { "content-type": "text/html" },
      raw: "<html><body>Search temporarily unavailable</body></html>"
    } :
    {
      status,
      json: { error: { code: status, message } }
    }

const handler = (places: Readonly<Record<string, FakePlace>>): FakeHandler => (request) => {
  const url = new URL(request.path, "http://fake")
  if (request.method !== "GET" || url.pathname !== "/search") return nominatimError(404, "not found")
  // the usage policy: stock library User-Agents are refused
  const agent = String(request.headers["user-agent"] ?? "")
  if (agent === "" || agent === "node" || agent.startsWith("undici")) {
    return nominatimError(403, "Access blocked: identify your application")
  }
  if (url.searchParams.get("format") !== "jsonv2") return nominatimError(400, "format must be jsonv2 in this fake")
  const place = places[url.searchParams.get("q") ?? ""]
  return { json: place === undefined ? [] : [nominatimResult(place)] }
}

/** `url` is the base URL (geo.base_url). */
export const startFakeNominatim = (places: Readonly<Record<string, FakePlace>> = {}): Promise<FakeServer> =>
  startFakeServer({ defaultHandler: handler(places), requestIdHeader: "x-request-id" })

export const BERLIN: FakePlace = {
  lat: 52.5170365,
  lon: 13.3888599,
  name: "Berlin",
  display_name: "Berlin, Deutschland",
  address: { city: "Berlin", state: "Berlin", "ISO3166-2-lvl4": "DE-BE", country: "Deutschland", country_code: "de" }
}
