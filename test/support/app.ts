/**
 * The remember machinery over a real database and the scripted LLM, for pipeline and HTTP
 * tests: `rememberLayer(storage, script)` provides the manager, the repositories, the
 * SqlClient and the ScriptedLlm recorder.
 */
import { Layer } from "effect"
import { NoneClassifierLive } from "../../layers/classifier/NoneClassifier.js"
import { type LlmScript, ScriptedLlm, type ScriptedLlmOptions } from "../../layers/testing/ScriptedLlm.js"
import { RememberManagerLive } from "../../src/pipeline/RememberManager.js"
import { RememberPipelineLive } from "../../src/pipeline/RememberPipelineLive.js"
import { RememberSettings, type RememberSettingsShape } from "../../src/pipeline/Settings.js"
import type { StorageLayer } from "./databases.js"

export interface RememberLayerOptions {
  readonly concurrency?: number
  readonly settings?: Partial<RememberSettingsShape>
  readonly llm?: ScriptedLlmOptions
}

export const rememberLayer = (storage: StorageLayer, script: LlmScript, options: RememberLayerOptions = {}) =>
  RememberManagerLive({ concurrency: options.concurrency ?? 4, instanceId: "test-instance" }).pipe(
    Layer.provideMerge(RememberPipelineLive),
    Layer.provideMerge(
      Layer.mergeAll(ScriptedLlm.layer(script, options.llm), NoneClassifierLive, RememberSettings.layer(options.settings))
    ),
    Layer.provideMerge(storage)
  )

/** An extract_graph answer. */
export const graph = (
  entities: ReadonlyArray<{ name: string; type?: string; description?: string }>,
  edges: ReadonlyArray<{
    source: string
    target: string
    relation: string
    description?: string
    valid_at?: string | null
    invalid_at?: string | null
  }>
) => ScriptedLlm.json({ entities, edges })

/** A resolve_edges answer. */
export const resolution = (
  duplicates: ReadonlyArray<{ new: number; existing: number }>,
  contradictions: ReadonlyArray<{ new: number; existing: ReadonlyArray<number> }>
) => ScriptedLlm.json({ duplicates, contradictions })
