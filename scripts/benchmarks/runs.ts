/**
 * Where a remember's time went, from its run log (`GET /v1/gb/runs/{id}`, times in ms): the
 * queue, each stage, the rest of the run between stages, and what lies outside the run (HTTP,
 * validation, the response) as the client's wall time minus the run's.
 */
import { stats } from "./report.js"
import { request, type Server } from "./server.js"

interface RunView {
  readonly queued_at: string
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly stages: Record<string, { status: string; duration_ms: number | null; inference_ids: Array<number> }>
}

export const breakdown = async (server: Server, runId: number, wallMs: number): Promise<Record<string, number>> => {
  const run = (await request<RunView>("GET", `${server.url}/v1/gb/runs/${runId}`)).body
  const at = (t: string | null) => (t === null ? NaN : Date.parse(t))
  const out: Record<string, number> = {}
  let staged = 0
  for (const [name, stage] of Object.entries(run.stages)) {
    if (stage.status === "not_started" || stage.duration_ms === null) continue
    out[`stage ${name}`] = stage.duration_ms
    staged += stage.duration_ms
  }
  const runMs = at(run.finished_at) - at(run.started_at)
  out["queue (queued → started)"] = at(run.started_at) - at(run.queued_at)
  out["run, outside its stages"] = runMs - staged
  out["outside the run (HTTP, validation, response)"] = wallMs - (at(run.finished_at) - at(run.queued_at))
  out["wall (client)"] = wallMs
  return out
}

/** The median of each part over many runs. */
export const medians = (parts: ReadonlyArray<Record<string, number>>): Record<string, number> => {
  const keys = [...new Set(parts.flatMap((p) => Object.keys(p)))]
  return Object.fromEntries(keys.map((k) => [k, stats(parts.map((p) => p[k] ?? 0)).p50]))
}
