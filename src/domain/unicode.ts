const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * A JSON `\ud800`-style escape without its pair is not Unicode: stored as UTF-8 it becomes
 * U+FFFD, so two different ids would name the same rows. Such strings are refused.
 */
export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s)
