import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { ROLE_NAMES, type RoleName, roleSubjectAltName } from './role-identity.js';

/**
 * Issues the X.509 certificates of internal traffic: a CA and role certificates signed by it.
 * Used where nobody else issues them — the single node's self-generated identity, `strata tls
 * generate` for operators without cert-manager, and the tests. Keys are made by Node's own crypto
 * (OpenSSL, fast); node-forge only builds and signs the certificates.
 */

export interface PemPair {
  /** PEM certificate. */
  cert: string;
  /** PEM private key (PKCS#8). */
  key: string;
}

const DAY_MS = 86_400_000;

function newRsaKeys() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey) };
}

function baseCertificate(publicKey: forge.pki.PublicKey, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive 16-byte serial in minimal DER form (RFC 5280 allows up to 20 octets): the first
  // byte is 0x01–0x7f, so no sign padding is needed. A leading 00 before a byte under 0x80 is
  // non-minimal DER, which strict parsers refuse as "illegal padding".
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f || 0x01;
  cert.serialNumber = serial.toString('hex');
  // Back-dated a little so that peers with slightly slow clocks accept a fresh certificate.
  cert.validity.notBefore = new Date(Date.now() - 5 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * DAY_MS);
  return cert;
}

/** A self-signed CA certificate valid for `days`. */
export function createCertificateAuthority(commonName = 'Strata internal CA', days = 3650): PemPair {
  const keys = newRsaKeys();
  const cert = baseCertificate(keys.publicKey, days);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true, pathLenConstraint: 0 },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKeyPem), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keys.privateKeyPem };
}

/**
 * A certificate for a process acting as `roles`, usable as both TLS server and client identity.
 * The roles are carried as DNS subject alternative names (`<role>.role.strata`, see
 * role-identity.ts); `extraDnsNames` and `ipAddresses` are added for tools that check host names.
 */
export function issueRoleCertificate(
  ca: PemPair,
  roles: readonly RoleName[],
  options: { days?: number; extraDnsNames?: string[]; ipAddresses?: string[] } = {},
): PemPair {
  if (roles.length === 0) throw new Error('a role certificate needs at least one role');
  for (const r of roles) if (!ROLE_NAMES.includes(r)) throw new Error(`unknown role ${r}`);
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const keys = newRsaKeys();
  const cert = baseCertificate(keys.publicKey, options.days ?? 825);
  cert.setSubject([{ name: 'commonName', value: `strata-${[...roles].sort().join('-')}` }]);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = [
    ...roles.map((r) => ({ type: 2, value: roleSubjectAltName(r) })),
    ...(options.extraDnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(options.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.key), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keys.privateKeyPem };
}
