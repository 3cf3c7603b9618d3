import type { RunWithStages } from "./Rows.js"
import { IMAGE_STAGES, TEXT_STAGES } from "./Stages.js"

/** A run as the API shows it: every stage of its pipeline keyed by name, in pipeline order. */
export const runView = (run: RunWithStages) => {
  const names: ReadonlyArray<string> = run.pipeline === "image" ? IMAGE_STAGES : TEXT_STAGES
  const byName = new Map(run.stages.map((s) => [s.stage, s]))
  const stages: Record<string, unknown> = {}
  for (const name of names) {
    const s = byName.get(name)
    stages[name] = s === undefined
      ? {
        status: "not_started",
        started_at: null,
        finished_at: null,
        duration_ms: null,
        error: null,
        inference_ids: []
      }
      : {
        status: s.status,
        started_at: s.started_at,
        finished_at: s.finished_at,
        duration_ms: s.duration_ms,
        error: s.error,
        inference_ids: s.inference_ids,
        ...(s.progress === null ? {} : { progress: s.progress }),
        ...(s.detail === null ? {} : { detail: s.detail })
      }
  }
  // instance_id is the process that owns the run: internal bookkeeping, not part of the API
  const { stages: _, instance_id: __, ...row } = run
  return { ...row, stages }
}
