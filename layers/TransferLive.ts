/**
 * What `gligabao dump` and `gligabao load` run over (src/cli/transfer.ts, docs/TRANSFER.md): the
 * configured storage with its TransferRepo, the configured vector store, image files and
 * embeddings (a load of a dump without vectors embeds again; the settings price those calls).
 * No LLM: neither command makes a model call.
 */
import { Layer } from "effect"
import type { AppConfig } from "../src/Config.js"
import { embeddingsFor, settingsFor, storageFor, vectorStoreFor } from "./App.js"
import { LocalImageStoreLive } from "./files/LocalImageStore.js"
import { TransferRepoLive } from "./sql/repositories/Transfer.js"

export const transferLayerFor = (config: AppConfig) =>
  Layer.mergeAll(
    TransferRepoLive,
    vectorStoreFor(config),
    embeddingsFor(config),
    settingsFor(config),
    LocalImageStoreLive(config.imageDir)
  ).pipe(Layer.provideMerge(storageFor(config)))
