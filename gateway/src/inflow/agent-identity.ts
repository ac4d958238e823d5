/**
 * Recognises uploads from an agent, for `__INFLOW_AGENT` (docs/api.md "Agent uploads").
 *
 * An upload comes from an agent when it carries one of:
 * 1. `X-Strata-Agent: <agent name or id>`: Strata's own header for collectors;
 * 2. `X-LS-Agent-DeviceId: <device id>`: the device id header the Logship collection agent sends;
 * 3. a `User-Agent` whose first product is a known collection agent (`logship-agent`,
 *    `Logship.Agent`, `strata-agent`).
 * The first that is present gives the value (trimmed, control characters removed, at most 256
 * characters). Anything else (curl, logsh, browsers, exporters) is not an agent: the column is null.
 */
const AGENT_USER_AGENT = /^(logship-agent|logship\.agent|strata-agent)\b/i;
const MAX_AGENT_LENGTH = 256;

function clean(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0x20 && code !== 0x7f) out += ch;
  }
  return out.trim().slice(0, MAX_AGENT_LENGTH);
}

export function agentIdentity(headers: { get(name: string): string }): string | null {
  for (const name of ['x-strata-agent', 'x-ls-agent-deviceid']) {
    const v = clean(headers.get(name));
    if (v) return v;
  }
  const ua = headers.get('user-agent');
  if (ua && AGENT_USER_AGENT.test(ua.trim())) return clean(ua) || null;
  return null;
}
