/**
 * The worker thread of scripts/bench-alloc.ts: the fake model servers and the HTTP client that
 * drives the server in the main thread. They run here so that their allocations (hash embeddings
 * serialised to JSON, fetch) land on this thread's heap, not on the profiled main thread's.
 *
 * Protocol: it posts `{ anthropicUrl, openAiUrl }` once its fakes listen; then answers each
 * command `{ id, cmd: "warmUp" | "remember" | "search" | "close", url, n }` with `{ id, ... }`
 * when it is done (after the server settles), or `{ id, error }`.
 */
import { parentPort } from "node:worker_threads"
import { DATASETS, rememberNext, search, settle, warmUp } from "./cpuWorkload.js"
import { type ModelCall, startFakes } from "./fakes.js"

export type Command =
  | { readonly id: number; readonly cmd: "warmUp"; readonly url: string }
  | { readonly id: number; readonly cmd: "remember" | "search"; readonly url: string; readonly n: number }
  | { readonly id: number; readonly cmd: "close" }

export interface Done {
  readonly id: number
  readonly error?: string
  readonly operations?: number
  readonly llmCalls?: number
  readonly embeddingCalls?: number
  /** facts in the search answers, all together */
  readonly facts?: number
}

const port = parentPort!
const fakes = await startFakes(0)
let remembered = 0
let searched = 0

const run = async (c: Command): Promise<Omit<Done, "id">> => {
  switch (c.cmd) {
    case "warmUp":
      await warmUp(c.url)
      return {}
    case "close":
      await fakes.close()
      return {}
    case "remember":
    case "search": {
      const before = performance.now()
      let facts = 0
      for (let i = 0; i < c.n; i++) {
        if (c.cmd === "remember") await rememberNext(c.url, remembered++ % DATASETS)
        else facts += (await search(c.url, searched++)).body.facts.length
      }
      await settle()
      const calls = fakes.between(before, performance.now())
      const count = (kind: ModelCall["kind"]) => calls.filter((x) => x.kind === kind).length
      return { operations: c.n, llmCalls: count("llm"), embeddingCalls: count("embeddings"), facts }
    }
  }
}

port.on("message", (c: Command) => {
  run(c).then(
    (done) => port.postMessage({ id: c.id, ...done }),
    (error) => port.postMessage({ id: c.id, error: String(error?.stack ?? error) })
  )
})
port.postMessage({ anthropicUrl: fakes.anthropicUrl, openAiUrl: fakes.openAiUrl })
