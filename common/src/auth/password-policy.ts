import { invalid } from '../errors.js';

/**
 * The password rule for passwords set through the API (creating a user, an admin setting one, a
 * user changing their own): at least 12 characters (length is what makes a password hard to
 * guess; no composition rules, after NIST SP 800-63B) and at most 1,024 (scrypt's cost grows with
 * the input; a megabyte "password" would be a cheap way to burn CPU). Provisioned passwords from
 * the configuration are the operator's choice and are not checked.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw invalid(`The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`);
  if (length > PASSWORD_MAX_LENGTH) throw invalid(`The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`);
}

/** The answer to a wrong current password on a user's own change; the gateway counts it for throttling. */
export const WRONG_CURRENT_PASSWORD = 'The current password is wrong.';
