/**
 * The package's main entry (`gligabao`): the core's public API and the one-call layer that
 * composes it. Adapters one by one are in `gligabao/layers`, test doubles in `gligabao/testing`.
 */
export * from "../src/index.js"
export type { PortLayers } from "./App.js"
export { configFor, Gligabao, type GligabaoOptions } from "./Gligabao.js"
