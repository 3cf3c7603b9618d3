/**
 * A fake Jev (`POST /v1/systemone`, spec/contracts.md section 14): checks the Bearer key and
 * the body's shape, and answers a choice with its confidence and probabilities.
 */
import { type FakeHandler, type FakeReply, type FakeServer, startFakeServer } from "./fakeLlmServer.js"

export type { FakeReply, FakeServer, RecordedRequest } from "./fakeLlmServer.js"

export interface JevAnswer {
  readonly choice: string
  readonly confidence: number
  readonly probabilities?: Readonly<Record<string, number>>
}

export const jevAnswer = (answer: JevAnswer, delayMs?: number): FakeReply => ({
  json: answer,
  ...(delayMs === undefined ? {} : { delayMs })
})

export const jevError = (status: number, message: string): FakeReply => ({ status, json: { error: message } })

export const DEFAULT_JEV_ANSWER: JevAnswer = {
  choice: "medium",
  confidence: 0.82,
  probabilities: { simple: 0.1, medium: 0.82, complex: 0.08 }
}

const handler = (apiKey: string, answer: JevAnswer): FakeHandler => (request) => {
  if (request.method !== "POST" || request.path !== "/v1/systemone") return jevError(404, `not found: ${request.path}`)
  if (request.headers.authorization !== `Bearer ${apiKey}`) return jevError(401, "invalid api key")
  const body = request.body
  if (
    typeof body?.question !== "string" || typeof body?.input !== "string" ||
    !Array.isArray(body?.choices) || body.choices.length < 2 ||
    !body.choices.every((c: unknown) => typeof c === "string")
  ) {
    return jevError(400, "question, choices and input are required")
  }
  return jevAnswer(answer)
}

/** `url` is the jev_url (no path). */
export const startFakeJev = (
  options: { readonly apiKey?: string; readonly answer?: JevAnswer } = {}
): Promise<FakeServer> =>
  startFakeServer({
    defaultHandler: handler(options.apiKey ?? "jev-test-key", options.answer ?? DEFAULT_JEV_ANSWER),
    requestIdHeader: "x-request-id"
  })
