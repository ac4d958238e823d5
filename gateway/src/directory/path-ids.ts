import { invalid, isGuid } from '@strata/common';
import type { RouteContext } from '../http/route.js';

/** A GUID path parameter in lower case; anything else is a 400 naming the parameter. */
export function guidParam(rc: RouteContext, name: 'userId' | 'accountId'): string {
  const value = rc.params[name] ?? '';
  if (!isGuid(value)) throw invalid(`The ${name === 'userId' ? 'user' : 'account'} id must be a GUID.`);
  return value.toLowerCase();
}
