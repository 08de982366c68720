// Every limit the platform enforces, with its numbers (the README's table is this one, so the two
// cannot drift apart), and the names and shapes the rest of the code uses to speak of a limit.
// No logic and no imports: the metrics (metrics/metrics.ts) label refusals by these names, and
// the limiters (./rate-limits.ts) count them.

export interface LimitSpec {
  points: number;
  /** Window in seconds. */
  duration: number;
  /** Once exceeded, refuse for this many seconds (default: until the window ends). */
  blockDuration?: number;
  description: string;
}

/** Every limit the platform enforces. Keys are normalised by the caller (see keys.ts). */
export const LIMITS = {
  csrf_ip: { points: 60, duration: 60, description: 'CSRF bootstrap and passkey sign-in options, per IP' },
  register_ip: { points: 5, duration: 3600, description: 'registrations, per IP' },
  login_ip: { points: 30, duration: 60, description: 'login attempts, per IP' },
  login_fail_ip: { points: 50, duration: 3600, description: 'failed logins, per IP' },
  login_fail_account: {
    points: 5,
    duration: 900,
    blockDuration: 900,
    description: 'lockout: failed logins per account (or unknown identifier); 15 min lock after the 5th',
  },
  otp_request_identifier: { points: 3, duration: 900, description: 'one-time code requests, per identifier' },
  otp_request_ip: { points: 10, duration: 3600, description: 'one-time code requests, per IP' },
  otp_verify_identifier: { points: 10, duration: 900, description: 'one-time code checks, per identifier' },
  otp_verify_ip: { points: 30, duration: 900, description: 'one-time code checks, per IP' },
  forgot_identifier: { points: 3, duration: 3600, description: 'password-reset mails, per identifier' },
  forgot_ip: { points: 10, duration: 3600, description: 'password-reset requests, per IP' },
  reset_ip: { points: 10, duration: 3600, description: 'password resets, per IP' },
  verify_ip: { points: 20, duration: 3600, description: 'e-mail verifications, per IP' },
  account_update: { points: 10, duration: 900, description: 'profile and password changes, per account' },
  account_security: {
    points: 20,
    duration: 900,
    description: 'two-factor and passkey changes (POST account/security/), per account',
  },
  verify_resend: { points: 1, duration: 600, description: 'verification mail re-sent on login, per account' },
  deposit_account: { points: 5, duration: 3600, description: 'deposit submissions, per account' },
  deposit_daily_account: { points: 20, duration: 86_400, description: 'deposit submissions per day, per account' },
  token_requests: { points: 600, duration: 60, description: 'token-surface requests, per token' },
  token_auth_fail_ip: { points: 60, duration: 60, description: 'token-surface requests with a bad token, per IP' },
  deploy_account: {
    points: 10,
    duration: 3600,
    description: 'deploys and orders on either surface, per account (refused ones are given back)',
  },
  console_ticket_service: { points: 6, duration: 60, description: 'console tickets, per service' },
  console_ticket_account: { points: 20, duration: 60, description: 'console tickets, per account' },
  search: { points: 30, duration: 10, description: 'searches, per session or token (CONTRACT §8)' },
  live_status_account: { points: 60, duration: 60, description: 'live power/status reads, per account' },
  live_graph_account: { points: 20, duration: 60, description: 'live graph reads, per account' },
  game_invite_service: { points: 10, duration: 3600, description: 'game subuser invites, per service' },
  // Panel actions (T3-M5): all customers of a node share its panel key's allowance (Pterodactyl:
  // 720 a minute for the one panel user), so each account gets a share well below it.
  panel_read_account: { points: 120, duration: 60, description: 'panel reads (GET game/web/vps actions), per account' },
  panel_write_account: {
    points: 30,
    duration: 60,
    description: 'panel actions that change something (POST game/web/vps actions), per account',
  },
  panel_sso_account: {
    points: 10,
    duration: 60,
    description: 'panel sign-in links (services ?action=sso), per account',
  },
} as const satisfies Record<string, LimitSpec>;

export type LimitName = keyof typeof LIMITS;

/** What the RateLimit-* headers report. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window (or block) ends. */
  reset: number;
}

/** Numbers of some limits changed for this instance (tests that drive one account hard); README lists LIMITS. */
export type LimitOverrides = Partial<Record<LimitName, Partial<Pick<LimitSpec, 'points' | 'duration'>>>>;

/** The spec of a limit with this instance's overrides applied. */
export function specWith(overrides: LimitOverrides, name: LimitName): LimitSpec {
  const changed = overrides[name];
  return changed === undefined ? LIMITS[name] : { ...LIMITS[name], ...changed };
}
