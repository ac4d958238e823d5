import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  /** The message as received, with quoted-printable soft breaks and escapes decoded. */
  raw: string;
  messageId: string | undefined;
  subject: string | undefined;
}

/** Undoes quoted-printable so tests can search the text of any part. */
function decodeQuotedPrintable(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

const header = (raw: string, name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(raw)?.[1]?.trim();

/**
 * A real SMTP server on a loopback port (smtp-server, no TLS, no authentication required). Each
 * message's DATA is answered by `reply(attempt)`: undefined accepts, a number rejects with that
 * SMTP code (421/451 temporary, 550 permanent). Every attempt, accepted or not, is recorded.
 */
export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  readonly attempts: ReceivedMail[] = [];
  reply: (attempt: number) => number | undefined = () => undefined;

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<TestSmtpServer> {
    let self: TestSmtpServer | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = decodeQuotedPrintable(Buffer.concat(chunks).toString('latin1'));
          const mail: ReceivedMail = {
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            messageId: header(raw, 'Message-ID'),
            subject: header(raw, 'Subject'),
          };
          const code = self!.reply(self!.attempts.length);
          self!.attempts.push(mail);
          if (code === undefined) {
            self!.received.push(mail);
            callback();
          } else {
            const err = Object.assign(new Error(`test server answers ${code}`), { responseCode: code });
            callback(err);
          }
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
    self = new TestSmtpServer(server, port);
    return self;
  }

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = await TestSmtpServer.start();
  const port = s.port;
  await s.stop();
  return port;
}
