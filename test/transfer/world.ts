/**
 * The memory the transfer tests move: a real `gligabao serve` on a SQLite file, with the fake
 * Anthropic server answering as the deterministic fake model (and as an image reader) and the
 * fake OpenAI server embedding, fed over HTTP: facts that close others, a fact closed by hand,
 * a text with the caller's metadata,
 * a conversation in a session, a long text in chunks with summaries, an image, a dataset name
 * soft-deleted and used again, and a second user.
 */
import { join } from "node:path"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { type FakeServer, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { startFakeOpenAi } from "../support/fakeOpenAi.js"
import { b64, png } from "../support/images.js"

export type Json = Record<string, any>

/** The image answer of the fake model (extract_image), for a request carrying an image. */
const IMAGE_ANSWER = JSON.stringify({
  theme: "Plot",
  title: "Revenue 2024",
  text_blocks: [{ kind: "title", text: "Revenue 2024" }, { kind: "axis", text: "Q1" }]
})

const hasImage = (body: any) =>
  (body?.messages ?? []).some((m: any) => Array.isArray(m?.content) && m.content.some((b: any) => b?.type === "image"))

export interface World {
  readonly dir: string
  readonly db: string
  readonly images: string
  /** the environment every command of the tests runs with (fake model servers, 64-dimension embeddings) */
  readonly env: Readonly<Record<string, string>>
  /** the same without embeddings */
  readonly envWithoutEmbeddings: Readonly<Record<string, string>>
  /** responses of alice's remembers, in order */
  readonly remembered: ReadonlyArray<Json>
  /** times between remembers, for `known_at` */
  readonly knownAt: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

const post = async (server: SpawnedServer, path: string, body: Json): Promise<Json> => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000)
  })
  const json = (await res.json()) as Json
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

const del = async (server: SpawnedServer, path: string) => {
  const res = await fetch(`${server.url}${path}`, { method: "DELETE", signal: AbortSignal.timeout(30_000) })
  if (res.status !== 200) throw new Error(`DELETE ${path} answered ${res.status}: ${await res.text()}`)
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const buildWorld = async (): Promise<World> => {
  const dir = tempDir("gligabao-transfer-")
  const db = join(dir.path, "source.db")
  const images = join(dir.path, "source-images")
  const fakes: Array<FakeServer> = []
  const anthropic = await startFakeAnthropic({
    text: (request) => (hasImage(request.body) ? IMAGE_ANSWER : answer(request.body).text)
  })
  fakes.push(anthropic)
  const openai = await startFakeOpenAi()
  fakes.push(openai)
  const envWithoutEmbeddings = {
    ANTHROPIC_API_KEY: "test",
    ANTHROPIC_BASE_URL: anthropic.url,
    GLIGABAO_EMBEDDING_DIMENSIONS: "64",
    GLIGABAO_CHUNK_SIZE: "64"
  }
  const env = { ...envWithoutEmbeddings, OPENAI_API_KEY: "test", GLIGABAO_EMBEDDING_BASE_URL: openai.url }
  const server = await startServer({ env, db, args: ["--image-dir", images] })
  const remembered: Array<Json> = []
  const knownAt: Array<string> = []
  try {
    const remember = async (body: Json) => {
      const response = await post(server, "/v1/gb/remember", body)
      if (body.user_id === "alice" && (body.dataset ?? "main") === "main") remembered.push(response)
      // a moment between remembers, so that `known_at` can fall between two of them
      await pause(5)
      knownAt.push(new Date().toISOString())
      await pause(5)
      return response
    }
    await remember({
      user_id: "alice",
      text: "Alice Novak lives in Berlin in 2020. Alice Novak works at Acme in 2019.",
      reference_time: "2021-01-01T00:00:00Z",
      metadata: { source: "email", priority: 2 }
    })
    await remember({
      user_id: "alice",
      text: "Alice Novak lives in Paris in 2023. Alice Novak lived in Rome until 2019.",
      reference_time: "2023-06-01T00:00:00Z"
    })
    const knows = await remember({
      user_id: "alice",
      text: "Bruno Costa knows Alice Novak in 2022.",
      reference_time: "2023-07-01T00:00:00Z"
    })
    await post(server, `/v1/gb/facts/${knows.edges[0].id}/invalidate`, {
      user_id: "alice",
      dataset: "main",
      invalid_at: "2024-01-01T00:00:00Z"
    })
    await remember({
      user_id: "alice",
      session_id: "chat-1",
      messages: [
        { role: "user", content: "Carla Dias visited Lisbon in 2022.", created_at: "2024-02-01T10:00:00Z" },
        { role: "assistant", content: "Noted: Carla Dias visited Lisbon.", created_at: "2024-02-01T10:00:05Z" },
        { role: "user", content: "Carla Dias works at Initech in 2024.", created_at: "2024-02-01T10:01:00Z" }
      ]
    })
    await remember({
      user_id: "alice",
      text: [
        "Dora Lima founded Zeta Labs in 2015. Dora Lima lives in Porto in 2016.",
        "Evan Ross works at Zeta Labs in 2017. Evan Ross knows Dora Lima in 2017.",
        "Fay Moss visited Porto in 2018. Fay Moss works at Acme in 2019.",
        "Gus Hart lives in Madrid in 2020. Gus Hart knows Fay Moss in 2020.",
        "Hana Sato visited Kyoto in 2021. Hana Sato works at Initech in 2022."
      ].join("\n\n"),
      reference_time: "2024-03-01T00:00:00Z"
    })
    await remember({
      user_id: "alice",
      image: b64(png({ width: 2, height: 2, rgb: [10, 20, 30] })),
      session_id: "chat-1"
    })
    await remember({ user_id: "alice", dataset: "work", text: "Alice Novak works at Globex in 2018." })
    await del(server, "/v1/gb/datasets/work?user_id=alice")
    await remember({ user_id: "alice", dataset: "work", text: "Alice Novak works at Umbrella in 2021." })
    await remember({ user_id: "bob", text: "Bob Stone lives in Rome in 2018. Bob Stone works at Hooli in 2019." })
  } finally {
    const stopped = await server.stop()
    if (stopped.code !== 0) console.warn(`the source server exited ${JSON.stringify(stopped)}:\n${server.output()}`)
  }
  return {
    dir: dir.path,
    db,
    images,
    env,
    envWithoutEmbeddings,
    remembered,
    knownAt,
    close: async () => {
      await Promise.all(fakes.map((f) => f.close()))
      dir.remove()
    }
  }
}
