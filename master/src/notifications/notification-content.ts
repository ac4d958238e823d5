import { Marked, type Tokens } from 'marked';
import type { NotificationPayload } from './notification-payload.js';

export interface RenderedMail {
  subject: string;
  /** The markdown itself: the text/plain part. */
  text: string;
  /** The markdown rendered to HTML: the text/html part. */
  html: string;
}

const HEADINGS: Record<NotificationPayload['eventType'], string> = {
  INCIDENT_CREATED: 'Incident created',
  INCIDENT_UPDATED: 'Incident updated',
  INCIDENT_RESOLVED: 'Incident resolved',
  INCIDENT_REOPENED: 'Incident reopened',
  COMMENT_ADDED: 'Comment added',
};

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/**
 * Markdown to HTML for mail. Incident text is written by users, so raw HTML in it is shown as
 * text rather than passed through, and links keep only http, https and mailto targets.
 */
const mailMarkdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(token.text);
    },
    link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      if (!/^(https?:|mailto:)/i.test(token.href)) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(token.href)}"${title}>${text}</a>`;
    },
    image(token: Tokens.Image) {
      // Remote images in mail are tracking pixels at best: show the alternative text.
      return escapeHtml(token.text);
    },
  },
});

/** One-line fields (title, names) must not break the markdown structure around them. */
const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/** Human form of a history change item (`State:OPEN->RESOLVED` → `State: OPEN → RESOLVED`). */
function describeChange(item: string): string {
  const i = item.indexOf(':');
  const field = item.slice(0, i);
  const rest = item.slice(i + 1);
  return rest === 'updated' ? `${field} updated` : `${field}: ${rest.replace('->', ' → ')}`;
}

/**
 * The notification mail of one incident event (docs/operations.md, Incident notification e-mail): a heading describing the action,
 * then identifier, title, state, severity, owner, assignee, updated time, description and extra
 * details; a comment's body is its own section. The deep link appears only when `link` is given.
 */
export function renderNotification(p: NotificationPayload, link: string | undefined): RenderedMail {
  const i = p.incident;
  const heading = HEADINGS[p.eventType];
  const lines: string[] = [
    `# ${heading}: ${oneLine(i.title)}`,
    '',
    `- **Incident:** ${i.incidentId}`,
    `- **Title:** ${oneLine(i.title)}`,
    `- **State:** ${i.state}`,
    `- **Severity:** ${i.severity}`,
    `- **Owner:** ${oneLine(p.ownerLabel)}`,
    `- **Assignee:** ${p.assigneeLabel ? oneLine(p.assigneeLabel) : 'none'}`,
    `- **Updated:** ${i.updatedAt}`,
    '',
    '## Description',
    '',
    i.description?.trim() ? i.description.trim() : '_No description._',
  ];
  const details: string[] = [`- ${p.eventType === 'COMMENT_ADDED' ? 'Comment by' : 'Changed by'} ${oneLine(p.actorLabel)}`];
  for (const c of p.changes ?? []) details.push(`- ${describeChange(c)}`);
  if (p.eventType === 'INCIDENT_RESOLVED' && i.resolutionNote) details.push(`- Resolution note: ${oneLine(i.resolutionNote)}`);
  if (p.eventType === 'INCIDENT_REOPENED' && i.reopenReason) details.push(`- Reopen reason: ${oneLine(i.reopenReason)}`);
  lines.push('', '## Details', '', ...details);
  if (p.comment) {
    lines.push('', '## Comment', '', `_${oneLine(p.comment.authorLabel)} at ${p.comment.createdAt}:_`, '', p.comment.body.trim());
  }
  if (link) lines.push('', `[Open the incident](${link})`, '', link);
  const text = `${lines.join('\n')}\n`;
  const html = mailMarkdown.parse(text, { async: false });
  return { subject: `[${i.severity}] ${heading}: ${oneLine(i.title)}`, text, html };
}
