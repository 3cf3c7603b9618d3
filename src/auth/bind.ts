/**
 * Whether the server may listen on `host` with this authentication: without tokens anyone who
 * can reach the port reads and writes every user's memory, so only loopback is allowed unless
 * the operator says `--insecure-bind`.
 */
export const bindRefusal = (host: string, authEnabled: boolean, insecureBind: boolean): string | undefined => {
  if (authEnabled || insecureBind || isLoopback(host)) return undefined
  return `refusing to listen on ${host} without authentication: anyone who reaches the port could read and ` +
    `write every user's memory. Configure [auth] tokens (see docs/SECURITY.md), keep server.host on 127.0.0.1, ` +
    `or pass --insecure-bind if something in front of gligabao authenticates`
}

export const isLoopback = (host: string): boolean => {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h) || h === "::ffff:127.0.0.1"
}
