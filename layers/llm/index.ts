export * from "./AnthropicLlm.js"
export * from "./OpenAiLlm.js"
export {
  AttemptFailed,
  DEFAULT_RETRY_BASE_DELAY_MS,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  type RetryOptions,
  retrySchedule
} from "./retry.js"
export * from "./UnconfiguredLlm.js"
