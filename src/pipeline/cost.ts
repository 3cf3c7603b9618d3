// moved to src/kernel/cost.ts; this re-export lasts until the files still naming this path are rewritten
export * from "../kernel/cost.js"
