/**
 * `gligabao/ai`: memory tools for agent frameworks. Here the `@effect/ai` toolkit, which runs the
 * library's operations in your Effect program (toolkit.ts), and the tools' definitions for any
 * other framework. The Vercel AI SDK tools are `gligabao/ai/vercel` (vercel.ts): an entry of their
 * own, so that neither needs the other's framework installed. docs/AI-TOOLS.md.
 */
export { TOOL_DEFINITIONS } from "./definitions.js"
export * from "./toolkit.js"
