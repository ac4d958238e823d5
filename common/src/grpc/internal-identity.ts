import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ChannelCredentials, credentials, experimental, ServerCredentials } from '@grpc/grpc-js';
import { createCertificateAuthority, issueRoleCertificate, type PemPair } from './certificate-authority.js';
import { type RoleName, rolesOfSubjectAltName } from './role-identity.js';

/**
 * The process's identity for internal gRPC traffic: mutual TLS, every peer's certificate signed by
 * the cluster's CA and naming its roles (role-identity.ts). Servers demand a client certificate in
 * the TLS handshake, so a caller without one never reaches a handler; clients check that the server
 * holds the role they meant to call instead of a host name (pod addresses change, roles do not).
 *
 * Two sources:
 * - files (`internalTls.caFile`/`certFile`/`keyFile`, how Kubernetes mounts a Secret): re-read
 *   every `refreshIntervalSeconds`, so a rotated Secret is picked up without a restart;
 * - generated: a CA kept in `generateDir` (created once, mode 0600) and a certificate for this
 *   process's roles issued in memory at every start. Processes that share `generateDir` trust each
 *   other; that is the single node (`npm start`) and tests. Loopback is not a trust boundary, so
 *   even one process authenticates its own roles to each other.
 */
export interface InternalTlsSettings {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  generateDir: string;
  refreshIntervalSeconds: number;
}

export interface InternalIdentity {
  /** Where the identity comes from, for the start-up log (never key material). */
  readonly source: { kind: 'files'; caFile: string; certFile: string } | { kind: 'generated'; dir: string };
  /**
   * Resolves once the certificates are loaded (files are read asynchronously); a server started
   * before that would fail its first handshakes. Rejects when the files cannot be read.
   */
  ready(): Promise<void>;
  serverCredentials(): ServerCredentials;
  /** Credentials that accept only a server holding `serverRole`. */
  channelCredentials(serverRole: RoleName): ChannelCredentials;
}

function verifierFor(serverRole: RoleName) {
  return {
    checkServerIdentity: (_host: string, cert: { subjectaltname?: string }) =>
      rolesOfSubjectAltName(cert.subjectaltname).has(serverRole)
        ? undefined
        : new Error(`the server's certificate does not hold the ${serverRole} role`),
  };
}

/** Loads the identity `settings` describe, for a process running `roles`. */
export function loadInternalIdentity(settings: InternalTlsSettings, roles: readonly RoleName[]): InternalIdentity {
  const { caFile, certFile, keyFile } = settings;
  if (caFile && certFile && keyFile) return fileIdentity(caFile, certFile, keyFile, settings.refreshIntervalSeconds);
  const ca = ensureGeneratedCa(settings.generateDir);
  return pemIdentity(ca.cert, issueRoleCertificate(ca, roles.length ? roles : ['gateway']), {
    kind: 'generated',
    dir: settings.generateDir,
  });
}

/** An identity from PEM text held in memory (generated identities; tests). */
export function pemIdentity(caCert: string, own: PemPair, source: InternalIdentity['source']): InternalIdentity {
  const ca = Buffer.from(caCert);
  const key = Buffer.from(own.key);
  const cert = Buffer.from(own.cert);
  return {
    source,
    ready: async () => undefined,
    serverCredentials: () => ServerCredentials.createSsl(ca, [{ private_key: key, cert_chain: cert }], true),
    channelCredentials: (serverRole) => credentials.createSsl(ca, key, cert, verifierFor(serverRole)),
  };
}

function fileIdentity(caFile: string, certFile: string, keyFile: string, refreshSeconds: number): InternalIdentity {
  // Fail at start-up, with the file named, rather than at the first call.
  for (const f of [caFile, certFile, keyFile]) readFileSync(f);
  // One provider watches all three files and serves as both the CA and the identity provider:
  // grpc-js 1.14's createCertificateProviderServerCredentials hands its two providers to the
  // constructor in swapped order, which a single provider for both makes harmless.
  const provider = new experimental.FileWatcherCertificateProvider({
    caCertificateFile: caFile,
    certificateFile: certFile,
    privateKeyFile: keyFile,
    refreshIntervalMs: refreshSeconds * 1000,
  });
  const loaded = new Promise<void>((resolve, reject) => {
    let identity = false;
    let ca = false;
    const done = () => {
      if (!identity || !ca) return;
      provider.removeIdentityCertificateListener(onIdentity);
      provider.removeCaCertificateListener(onCa);
      resolve();
    };
    const onIdentity = (update: unknown) => {
      if (!update) return reject(new Error(`cannot read ${certFile} and ${keyFile}`));
      identity = true;
      done();
    };
    const onCa = (update: unknown) => {
      if (!update) return reject(new Error(`cannot read ${caFile}`));
      ca = true;
      done();
    };
    provider.addIdentityCertificateListener(onIdentity);
    provider.addCaCertificateListener(onCa);
  });
  return {
    source: { kind: 'files', caFile, certFile },
    ready: () => loaded,
    serverCredentials: () => experimental.createCertificateProviderServerCredentials(provider, provider, true),
    channelCredentials: (serverRole) =>
      experimental.createCertificateProviderChannelCredentials(provider, provider, verifierFor(serverRole)),
  };
}

/**
 * The CA of generated identities in `dir`: read when present, otherwise created. Several processes
 * may start at once on one directory: the CA is written to a temporary file and published with
 * link(2), which fails if another process published first; the loser reads the winner's CA.
 */
export function ensureGeneratedCa(dir: string): PemPair {
  const file = path.join(dir, 'ca.pem');
  const read = (): PemPair | undefined => {
    try {
      const text = readFileSync(file, 'utf8');
      const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0];
      const key = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(text)?.[0];
      if (!cert || !key) throw new Error(`${file} does not hold a certificate and a private key`);
      return { cert: `${cert}\n`, key: `${key}\n` };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = createCertificateAuthority();
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, `${ca.cert}${ca.key}`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const published = read();
  if (!published) throw new Error(`could not create ${file}`);
  return published;
}
