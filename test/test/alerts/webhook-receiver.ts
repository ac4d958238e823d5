import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records every POST; `failNext[path] = n` answers the next n there with 503. */
export class WebhookReceiver {
  readonly received: ReceivedHook[] = [];
  readonly failNext: Record<string, number> = {};
  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    let self: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        self!.received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        const path = req.url ?? '';
        if ((self!.failNext[path] ?? 0) > 0) {
          self!.failNext[path]!--;
          res.writeHead(503).end('try later');
        } else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    self = new WebhookReceiver(server);
    return self;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  on(path: string): ReceivedHook[] {
    return this.received.filter((r) => r.path === path);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
