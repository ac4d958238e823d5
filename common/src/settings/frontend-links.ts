import type { SettingValues } from './effective-settings.js';
import { SettingKeys } from './setting-catalogue.js';

/**
 * The frontend base URL from Service.Application.FrontendUrl when it is a valid absolute http(s)
 * URL, without trailing slashes (and without query or fragment, which a base cannot carry);
 * undefined when blank or invalid (then notifications carry no link: docs/operations.md).
 */
function frontendBaseUrl(frontendUrl: string | null | undefined): string | undefined {
  const text = frontendUrl?.trim();
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The deep link of an incident, `<frontend_url>/account/<accountId>/incidents/<incidentId>`, or
 * undefined when the frontend URL is blank or not a valid absolute URL.
 */
export function incidentDeepLink(
  frontendUrl: string | null | undefined,
  accountId: string,
  incidentId: string,
): string | undefined {
  const base = frontendBaseUrl(frontendUrl);
  if (!base) return undefined;
  return `${base}/account/${encodeURIComponent(accountId)}/incidents/${encodeURIComponent(incidentId)}`;
}

/** incidentDeepLink with the frontend URL taken from the stored system settings. */
export function incidentDeepLinkFromSettings(system: SettingValues, accountId: string, incidentId: string): string | undefined {
  return incidentDeepLink(system[SettingKeys.FrontendUrl], accountId, incidentId);
}
