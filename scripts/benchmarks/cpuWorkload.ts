/**
 * The cpu scenario's workload (scripts/benchmarks/scenarios/cpu.ts), driven over HTTP with fetch:
 * texts "A knows B. C knows D. E knows F." from a cast of 16 into 8 datasets, every fact new to
 * its dataset, then hybrid searches "Who does X know?". Shared by scripts/bench-ops.ts and
 * scripts/bench-alloc.ts (issue 39); the server they drive is scripts/benchmarks/inProcess.ts.
 */
import { request } from "./server.js"
import { people } from "./texts.js"

export const DATASETS = 8
export const DIMS = 1536
/** remembers and searches before anything is measured: JIT, prepared statements, caches */
export const WARM_UP = 8
const CAST = people(16, 39)

// ---- the workload ----

/** The j-th fact of a dataset: no two j < 16 × 15 give the same pair. */
const fact = (j: number) => {
  const a = j % CAST.length
  return `${CAST[a]} knows ${CAST[(a + 1 + Math.floor(j / CAST.length)) % CAST.length]}.`
}
const written = Array.from({ length: DATASETS }, () => 0)
const queryOf = (i: number) => `Who does ${CAST[(i * 5) % CAST.length]} know?`

const body = (dataset: number, field: string, value: string) => ({
  user_id: "bench",
  dataset: `cpu-${dataset}`,
  [field]: value
})
/** Remembers the next text of a dataset (three facts new to it). */
export const rememberNext = (url: string, dataset: number) => {
  const i = written[dataset]!++
  const text = [0, 1, 2].map((k) => fact(3 * i + k)).join(" ")
  return request("POST", `${url}/v1/gb/remember`, body(dataset, "text", text))
}
/** The i-th hybrid search, round robin over the datasets. */
export const search = (url: string, i: number) =>
  request<{ facts: Array<unknown> }>("POST", `${url}/v1/gb/search`, {
    ...body(i % DATASETS, "query", queryOf(i)),
    limit: 10
  })
/** Lets what a request left running in the background (run-log writes, say) finish. */
export const settle = () => new Promise((r) => setTimeout(r, 100))

/** Two texts a dataset (the second makes both model calls), then WARM_UP more, then WARM_UP searches. */
export const warmUp = async (url: string) => {
  for (let i = 0; i < 2 * DATASETS + WARM_UP; i++) await rememberNext(url, i % DATASETS)
  for (let i = 0; i < WARM_UP; i++) await search(url, i)
  await settle()
}
