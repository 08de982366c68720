// Every e-mail the platform sends, as plain text and HTML. Values are escaped into the HTML;
// links are built from PUBLIC_URL (CONTRACT §4; the mailer refuses any other). The name an
// account chose is never in the verification mail, which goes to an address not yet proven
// (review F12); elsewhere it is shown without control characters, and only if it still passes
// today's name rules (no web or e-mail address), else the mail says just "Hello,".

import { nameProblem } from '../accounts/rules.ts';

export type MailMessage =
  /** `name` is accepted but never shown: the address is not proven yet. */
  | { template: 'verify_email'; name?: string; link: string }
  | { template: 'reset_password'; name: string; link: string }
  | { template: 'login_code'; name: string; code: string; minutes: number }
  /** Staff turned the account's two-factor sign-in off (CONTRACT §11). */
  | { template: 'two_factor_reset'; name: string }
  /** A sign-in from a device the account's log has not seen before (CONTRACT §11). */
  | { template: 'new_sign_in'; name: string; at: string; ip: string; device: string; link: string }
  | { template: 'deposit_approved'; name: string; amount: string; reference: string; balance: string }
  | { template: 'deposit_rejected'; name: string; amount: string; reference: string; reason: string }
  /** The billing cycle (CONTRACT §7): reminders, renewals, unpaid orders, suspensions, terminations. */
  | { template: 'billing'; name: string; subject: string; paragraphs: string[] }
  /** Data export and account deletion (CONTRACT §11): always with a link to the panel's privacy page. */
  | { template: 'privacy'; name: string; subject: string; paragraphs: string[]; link: string; linkLabel: string }
  /** A webhook endpoint was disabled: it failed for 3 days, or answered 410 Gone (CONTRACT §13). */
  | { template: 'webhook_disabled'; name: string; url: string; why: string; link: string }
  /** An invitation to the staff console (CONTRACT §14): set a password at the link. */
  | { template: 'staff_invite'; name: string; role: string; link: string; hours: number };

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Bidirectional overrides and isolates: they can reorder what a reader sees. */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/gu;

/** "Hello <name>," with a name fit for a mail, or "Hello," when it is not. */
export function greeting(name: string | undefined): string {
  const clean = (name ?? '')
    .replace(/\p{Cc}/gu, ' ')
    .replace(BIDI, '')
    .replace(/\s+/g, ' ')
    .trim();
  return clean !== '' && nameProblem(clean) === null ? `Hello ${clean},` : 'Hello,';
}

function page(title: string, paragraphs: string[]): string {
  const body = paragraphs.map((p) => `<p style="margin:0 0 16px">${p}</p>`).join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,sans-serif;font-size:15px;line-height:1.5;color:#1b1f24;max-width:560px;margin:24px auto;padding:0 16px">
${body}
<p style="margin:24px 0 0;color:#6a737d;font-size:13px">Hostplane</p>
</body></html>`;
}

function button(link: string, label: string): string {
  return `<a href="${escapeHtml(link)}" style="display:inline-block;background:#0b5cff;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none">${escapeHtml(label)}</a>`;
}

/** The staff console's invitation (CONTRACT §14). */
function staffInvite(message: Extract<MailMessage, { template: 'staff_invite' }>, hello: string): RenderedMail {
  return {
    subject: 'Your Hostplane staff account',
    text: `${hello}\n\nYou have been given a Hostplane staff account (role: ${message.role}). Choose your password here:\n\n${message.link}\n\nThe link works once, within ${message.hours} hours. After signing in you will set up an authenticator app: staff sign-in always takes a second factor.\n`,
    html: page('Your Hostplane staff account', [
      escapeHtml(hello),
      `You have been given a Hostplane staff account (role: <strong>${escapeHtml(message.role)}</strong>). Choose your password:`,
      button(message.link, 'Choose a password'),
      `Or open this link: ${escapeHtml(message.link)}`,
      `The link works once, within ${message.hours} hours. After signing in you will set up an authenticator app: staff sign-in always takes a second factor.`,
    ]),
  };
}

export function renderMail(message: MailMessage): RenderedMail {
  const hello = message.template === 'verify_email' ? 'Hello,' : greeting(message.name);
  if (message.template === 'staff_invite') return staffInvite(message, hello);
  switch (message.template) {
    case 'verify_email':
      return {
        subject: 'Verify your e-mail address',
        text: `${hello}\n\nConfirm this address to finish creating your Hostplane account:\n\n${message.link}\n\nThe link works once, within 48 hours. If you did not sign up, ignore this message.\n`,
        html: page('Verify your e-mail address', [
          escapeHtml(hello),
          'Confirm this address to finish creating your Hostplane account:',
          button(message.link, 'Verify e-mail address'),
          `Or open this link: ${escapeHtml(message.link)}`,
          'The link works once, within 48 hours. If you did not sign up, ignore this message.',
        ]),
      };
    case 'reset_password':
      return {
        subject: 'Reset your password',
        text: `${hello}\n\nSomeone asked to reset the password of your Hostplane account. To choose a new one, open:\n\n${message.link}\n\nThe link works once, within 1 hour, and signs out every session. If it was not you, ignore this message: your password stays as it is.\n`,
        html: page('Reset your password', [
          escapeHtml(hello),
          'Someone asked to reset the password of your Hostplane account. To choose a new one:',
          button(message.link, 'Choose a new password'),
          `Or open this link: ${escapeHtml(message.link)}`,
          'The link works once, within 1 hour, and signs out every session. If it was not you, ignore this message: your password stays as it is.',
        ]),
      };
    case 'deposit_approved':
      return {
        subject: `Deposit of ₹${message.amount} approved`,
        text: `${hello}\n\nYour deposit of ₹${message.amount} (UPI/bank reference ${message.reference}) has been approved and added to your wallet.\nYour balance is now ₹${message.balance}.\n`,
        html: page('Deposit approved', [
          escapeHtml(hello),
          `Your deposit of <strong>₹${escapeHtml(message.amount)}</strong> (UPI/bank reference ${escapeHtml(message.reference)}) has been approved and added to your wallet.`,
          `Your balance is now <strong>₹${escapeHtml(message.balance)}</strong>.`,
        ]),
      };
    case 'deposit_rejected':
      return {
        subject: `Deposit of ₹${message.amount} not approved`,
        text: `${hello}\n\nWe could not approve your deposit of ₹${message.amount} (UPI/bank reference ${message.reference}).\nReason: ${message.reason}\n\nReply to this message if you think this is a mistake.\n`,
        html: page('Deposit not approved', [
          escapeHtml(hello),
          `We could not approve your deposit of <strong>₹${escapeHtml(message.amount)}</strong> (UPI/bank reference ${escapeHtml(message.reference)}).`,
          `Reason: ${escapeHtml(message.reason)}`,
          'Reply to this message if you think this is a mistake.',
        ]),
      };
    case 'billing':
      return {
        subject: message.subject,
        text: `${hello}\n\n${message.paragraphs.join('\n\n')}\n`,
        html: page(message.subject, [escapeHtml(hello), ...message.paragraphs.map(escapeHtml)]),
      };
    case 'privacy':
      return {
        subject: message.subject,
        text: `${hello}\n\n${message.paragraphs.join('\n\n')}\n\n${message.linkLabel}: ${message.link}\n`,
        html: page(message.subject, [
          escapeHtml(hello),
          ...message.paragraphs.map(escapeHtml),
          button(message.link, message.linkLabel),
          `Or open this link: ${escapeHtml(message.link)}`,
        ]),
      };
    case 'webhook_disabled':
      return {
        subject: 'A webhook endpoint was disabled',
        text: `${hello}\n\nWe stopped sending webhooks to ${message.url}: ${message.why}\n\nWhen it answers again, enable it on ${message.link} (failed deliveries can be sent again from its log there).\n`,
        html: page('A webhook endpoint was disabled', [
          escapeHtml(hello),
          `We stopped sending webhooks to <strong>${escapeHtml(message.url)}</strong>: ${escapeHtml(message.why)}`,
          'When it answers again, enable it on the webhooks page (failed deliveries can be sent again from its log there):',
          button(message.link, 'Open webhooks'),
        ]),
      };
    case 'two_factor_reset':
      return {
        subject: 'Two-factor sign-in was turned off',
        text: `${hello}\n\nAt your request, our staff turned off two-factor sign-in on your Hostplane account and deleted its recovery codes. Every session was signed out.\n\nSign in with your password and turn two-factor sign-in on again under Account → Security. If you did not ask for this, reset your password now and reply to this message.\n`,
        html: page('Two-factor sign-in was turned off', [
          escapeHtml(hello),
          'At your request, our staff turned off two-factor sign-in on your Hostplane account and deleted its recovery codes. Every session was signed out.',
          'Sign in with your password and turn two-factor sign-in on again under Account → Security. If you did not ask for this, reset your password now and reply to this message.',
        ]),
      };
    case 'new_sign_in': {
      const facts = [`When: ${message.at}`, `Device: ${message.device}`, `IP address: ${message.ip}`];
      const advice =
        'If this was not you, change your password now (Account → Profile): that signs out every other session. ' +
        'Then look at your activity log and your API tokens, and turn on two-factor sign-in.';
      return {
        subject: 'New sign-in to your Hostplane account',
        text: `${hello}\n\nYour Hostplane account was just signed in to from a device it has not been used on before.\n\n${facts.join('\n')}\n\nIf this was you, there is nothing to do.\n\n${advice}\n\nYour activity log: ${message.link}\n`,
        html: page('New sign-in to your Hostplane account', [
          escapeHtml(hello),
          'Your Hostplane account was just signed in to from a device it has not been used on before.',
          facts.map(escapeHtml).join('<br>'),
          'If this was you, there is nothing to do.',
          escapeHtml(advice),
          button(message.link, 'Open your activity log'),
        ]),
      };
    }
    case 'login_code':
      return {
        // The subject is stored in the clear (mail_outbox.subject): the code only goes in the sealed body.
        subject: 'Your Hostplane sign-in code',
        text: `${hello}\n\nYour one-time sign-in code is ${message.code}\n\nIt works once, within ${message.minutes} minutes. If you did not ask for it, ignore this message.\n`,
        html: page('Your sign-in code', [
          escapeHtml(hello),
          `Your one-time sign-in code is <strong style="font-size:22px;letter-spacing:3px">${escapeHtml(message.code)}</strong>`,
          `It works once, within ${message.minutes} minutes. If you did not ask for it, ignore this message.`,
        ]),
      };
  }
}
