import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCertificateAuthority, issueRoleCertificate, type PemPair, ROLE_NAMES } from '@strata/common';

export interface TlsGenerateResult {
  caCreated: boolean;
  files: string[];
}

/**
 * `strata tls generate --out DIR`: the files of internal mutual TLS for deployments without Helm's
 * generated Secret or cert-manager. DIR gets `ca.crt`/`ca.key` (kept when already there, so that a
 * second run re-issues role certificates under the same CA: rotation) and `<role>.crt`/`<role>.key`
 * for database, backend and gateway. Keys are written with mode 0600.
 */
export function generateTlsFiles(outDir: string, days: number): TlsGenerateResult {
  mkdirSync(outDir, { recursive: true, mode: 0o700 });
  const caCrt = path.join(outDir, 'ca.crt');
  const caKey = path.join(outDir, 'ca.key');
  const files: string[] = [];
  let ca: PemPair;
  let caCreated = false;
  if (existsSync(caCrt) && existsSync(caKey)) {
    ca = { cert: readFileSync(caCrt, 'utf8'), key: readFileSync(caKey, 'utf8') };
  } else if (existsSync(caCrt) || existsSync(caKey)) {
    throw new Error(`${outDir} holds only one of ca.crt and ca.key: remove it or bring both`);
  } else {
    ca = createCertificateAuthority();
    writeFileSync(caKey, ca.key, { mode: 0o600 });
    writeFileSync(caCrt, ca.cert, { mode: 0o644 });
    files.push(caCrt, caKey);
    caCreated = true;
  }
  for (const role of ROLE_NAMES) {
    const issued = issueRoleCertificate(ca, [role], { days });
    const crt = path.join(outDir, `${role}.crt`);
    const key = path.join(outDir, `${role}.key`);
    writeFileSync(key, issued.key, { mode: 0o600 });
    writeFileSync(crt, issued.cert, { mode: 0o644 });
    files.push(crt, key);
  }
  return { caCreated, files };
}
