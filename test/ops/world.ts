/**
 * What the operations tests share: the fake model (layers/testing/FactSentenceModel.ts for texts,
 * a fixed answer for images) behind the fake Anthropic API, and the HTTP calls they make to a
 * spawned `gligabao serve`.
 */
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { b64, png } from "../support/images.js"

const IMAGE_ANSWER = JSON.stringify({
  theme: "Photo",
  title: "A square of one colour",
  text_blocks: [{ kind: "caption", text: "a square" }]
})

const hasImage = (body: any): boolean =>
  (body?.messages ?? []).some((m: any) => Array.isArray(m?.content) && m.content.some((b: any) => b?.type === "image"))

/** The fake Anthropic API answering as the fake model, and the environment that points a server at it. */
export const startFakeModel = async (): Promise<
  { readonly fake: FakeAnthropic; readonly env: Record<string, string> }
> => {
  const fake = await startFakeAnthropic({
    text: (request) => (hasImage(request.body) ? IMAGE_ANSWER : answer(request.body).text)
  })
  return { fake, env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url } }
}

export const USER = "ops"

/** POST /v1/gb/remember, waiting for the run; fails unless it answers 200. */
export const remember = async (url: string, body: Record<string, unknown>): Promise<any> => {
  const res = await fetch(`${url}/v1/gb/remember`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user_id: USER, ...body }),
    signal: AbortSignal.timeout(60_000)
  })
  const json = await res.json()
  if (res.status !== 200) throw new Error(`remember answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** A distinct tiny PNG for `n`, base64-encoded as the remember request takes it. */
export const imageOf = (n: number): string => b64(png({ rgb: [n % 256, Math.floor(n / 256) % 256, 77] }))

/**
 * GET /v1/gb/graph with everything (expired facts too) as known at a fixed moment, so two exports
 * of the same rows are equal.
 */
export const exportGraph = async (url: string, extra = ""): Promise<any> => {
  const res = await fetch(
    `${url}/v1/gb/graph?user_id=${USER}&include_expired=true&as_of=2100-01-01T00:00:00Z` +
      `&known_at=2100-01-01T00:00:00Z${extra}`,
    { signal: AbortSignal.timeout(60_000) }
  )
  const json = await res.json()
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** The bytes of an image over HTTP (404 when the file is missing from the image directory). */
export const imageBytes = async (url: string, id: number): Promise<{ status: number; bytes: Buffer }> => {
  const res = await fetch(`${url}/v1/gb/images/${id}?user_id=${USER}&dataset=main`)
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}
