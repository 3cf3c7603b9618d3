/** The adapters: pick the ones you need when embedding gligabao (see README "Embedding"). */
export { AppLive, llmFor, settingsFor, storageFor } from "./App.js"
export { NoneClassifierLive } from "./classifier/NoneClassifier.js"
export { LocalImageStoreLive, makeLocalImageStore } from "./files/LocalImageStore.js"
export * from "./llm/index.js"
export { PgLive, RepositoriesLive, SqliteLive, type Storage } from "./sql/index.js"
export { type LlmScript, ScriptedLlm, type ScriptedAnswer } from "./testing/ScriptedLlm.js"
