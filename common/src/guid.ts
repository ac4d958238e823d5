import { z } from 'zod';

/** A GUID in its canonical 8-4-4-4-12 form, either case. */
export const GUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isGuid(value: string): boolean {
  return GUID_PATTERN.test(value);
}

/** A GUID field of config files and request bodies, stored in lower case. */
export const guidSchema = z
  .string()
  .regex(GUID_PATTERN, 'must be a GUID')
  .transform((s) => s.toLowerCase());
